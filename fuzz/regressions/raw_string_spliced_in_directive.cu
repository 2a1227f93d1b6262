#define _ R"(\
_Pragma("dp)")