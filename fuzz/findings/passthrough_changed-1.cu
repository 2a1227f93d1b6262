r\
_Pragma("dp")