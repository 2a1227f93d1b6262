5\
R"(
_Pragma("dp")