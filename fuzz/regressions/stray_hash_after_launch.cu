__global__ child(){}__global__ v(){
%:pragma dp threshold(2)
child<<<(),7>>>();#}