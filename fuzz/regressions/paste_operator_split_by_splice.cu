#\
#_Pragma("dp")