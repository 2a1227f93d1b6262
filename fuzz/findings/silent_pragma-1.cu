%\
:pragma dp