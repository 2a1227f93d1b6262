""(
%:pragma/**/dp''/*
)