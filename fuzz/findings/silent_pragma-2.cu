_P\
ragma("dp")