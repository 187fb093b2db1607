import { fromMinorUnits, minorUnitDigits, MoneyTally, percentOfMinorUnits, roundToMinorUnit, toMinorUnits } from '@affiliate/platform';

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

test('a report total over several currencies is summed exactly in minor units and converted once', () => {
  const tally = new MoneyTally();
  tally.add(10, 'USD'); // 0.10
  tally.add(20, 'usd'); // 0.20: float addition would give 0.30000000000000004
  tally.add(1, 'KWD'); // 0.001
  tally.add(5, 'JPY'); // 5
  expect(tally.faceValue()).toBe(5.301);
  expect(new MoneyTally().faceValue()).toBe(0);
});
