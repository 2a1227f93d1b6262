"\\
#pragma dp