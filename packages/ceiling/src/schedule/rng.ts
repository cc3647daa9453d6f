/** The seeded PRNG and the quantile rule live in @tickwise/time (one definition for every layer). */
export { quantileSorted, seededRng, type Rng } from '@tickwise/time';
