import assert from 'node:assert/strict';
import { test } from 'node:test';
import { countParts } from '../../src/emulator/message-parts.ts';

const cases: ReadonlyArray<{ name: string; text: string; parts: number }> = [
  { name: 'an empty text is one part', text: '', parts: 1 },
  { name: '160 GSM-7 characters are one part', text: 'a'.repeat(160), parts: 1 },
  { name: '161 GSM-7 characters are two parts of 153', text: 'a'.repeat(161), parts: 2 },
  { name: '306 GSM-7 characters are two parts', text: 'a'.repeat(306), parts: 2 },
  { name: '307 GSM-7 characters are three parts', text: 'a'.repeat(307), parts: 3 },
  { name: 'GSM extension characters count two septets', text: '€'.repeat(80), parts: 1 },
  { name: '81 extension characters pass one part', text: '€'.repeat(81), parts: 2 },
  { name: 'non-ASCII GSM letters stay GSM-7', text: 'é'.repeat(160), parts: 1 },
  { name: '70 UCS-2 characters are one part', text: 'ж'.repeat(70), parts: 1 },
  { name: '71 UCS-2 characters are two parts of 67', text: 'ж'.repeat(71), parts: 2 },
  {
    name: 'one non-GSM character makes the whole text UCS-2',
    text: `${'a'.repeat(100)}ж`,
    parts: 2,
  },
  { name: 'an emoji counts two UTF-16 units', text: '😀'.repeat(35), parts: 1 },
  { name: '36 emoji pass one part', text: '😀'.repeat(36), parts: 2 },
];

for (const { name, text, parts } of cases) {
  test(name, () => {
    assert.equal(countParts(text), parts);
  });
}
