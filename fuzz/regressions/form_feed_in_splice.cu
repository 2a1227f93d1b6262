_Pragma("dp\
")