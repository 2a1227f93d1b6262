"\\

#pragma dp