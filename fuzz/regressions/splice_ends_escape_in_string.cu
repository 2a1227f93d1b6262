"\\
#pragma dp