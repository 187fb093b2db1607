import { fromMinorUnits, minorUnitDigits, percentOfMinorUnits, roundToMinorUnit, toMinorUnits } from '@affiliate/platform';

test('an amount becomes whole minor units of its currency: cents, yen, fils', () => {
  expect(minorUnitDigits('USD')).toBe(2);
  expect(minorUnitDigits('jpy')).toBe(0);
  expect(minorUnitDigits('KWD')).toBe(3);
  expect(toMinorUnits(19.99, 'USD')).toBe(1999);
  expect(toMinorUnits(1234.5, 'JPY')).toBe(1235);
  expect(toMinorUnits(1.2345, 'KWD')).toBe(1235);
  expect(fromMinorUnits(1999, 'USD')).toBe(19.99);
  expect(fromMinorUnits(1235, 'KWD')).toBe(1.235);
});

test('one rounding rule: half away from zero, untouched by float noise', () => {
  expect(toMinorUnits(1.005, 'USD')).toBe(101); // 1.005 × 100 is 100.49999… in floats
  expect(toMinorUnits(0.125, 'USD')).toBe(13);
  expect(toMinorUnits(-0.125, 'USD')).toBe(-13);
  expect(roundToMinorUnit(2.675, 'USD')).toBe(2.68);
});

test('a percentage of minor units is computed on integers and rounded once', () => {
  expect(percentOfMinorUnits(1999, 33.3)).toBe(666); // 6.656667 → 6.66... of 19.99 at 33.3 %
  expect(percentOfMinorUnits(1000, 20)).toBe(200);
  expect(percentOfMinorUnits(5, 10)).toBe(1); // 0.5 cent rounds away from zero
  expect(percentOfMinorUnits(-5, 10)).toBe(-1);
  expect(percentOfMinorUnits(999_999_999_999, 12.345678)).toBe(123_456_780_000); // 123,456,779,999.88 minor units
});
