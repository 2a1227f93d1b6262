%:pragma""1'8/*
%:pragma dp*/