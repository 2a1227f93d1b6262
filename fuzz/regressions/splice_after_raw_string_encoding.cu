L\
R"doc(
#pragma dp)doc"