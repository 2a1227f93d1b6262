{(){}}(){R""(
_Pragma("dp")}