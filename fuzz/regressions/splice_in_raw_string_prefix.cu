R\
"doc(
#pragma dp)doc"