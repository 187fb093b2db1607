/** Money is kept to cents at the boundary (STYLE.md). */
export const roundToCents = (amount: number): number => Math.round(amount * 100) / 100;
