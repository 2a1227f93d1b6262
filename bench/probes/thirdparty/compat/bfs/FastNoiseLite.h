/* Stand-in for FastNoiseLite.h (a library in the repository's lib/, not in the fetched
 * sources; written for this check). main.cu only sets two options and never samples
 * noise (the grid is all ones). */
#pragma once
class FastNoiseLite {
public:
    enum NoiseType { NoiseType_OpenSimplex2, NoiseType_Perlin };
    enum FractalType { FractalType_None, FractalType_FBm };
    void SetNoiseType(NoiseType t) { noiseType = t; }
    void SetFractalType(FractalType t) { fractalType = t; }
private:
    NoiseType noiseType = NoiseType_OpenSimplex2;
    FractalType fractalType = FractalType_None;
};
