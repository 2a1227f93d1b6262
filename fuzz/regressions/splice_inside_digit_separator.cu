8'\
h'/*
#pragma dp