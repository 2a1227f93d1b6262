__global__ child(){}("
R"(
#pragma dp)")__global__ v(){
#pra\
gma dp threshold(4)
child<<<(),2>>>();}