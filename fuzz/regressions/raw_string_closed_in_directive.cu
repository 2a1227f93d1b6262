#define U(R"("/*)"
_Pragma("dp")