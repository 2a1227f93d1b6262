(''){
%:pragma dp/**\
//*/
}