"""\\

#pragma dp