_Pragma("dp\ 
")