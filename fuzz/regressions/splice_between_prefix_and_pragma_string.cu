_Pragma(L\
"dp")