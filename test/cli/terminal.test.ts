// The CLI's one sanitiser of printed text (src/tools/cli/terminal.ts).
import { describe, expect, test } from 'vitest';
import { jsonText, printable } from '../../src/tools/cli/args.js';

describe('printable', () => {
  test.each([
    ['\u001b[31mred\u001b[0m', 'red'],
    ['\u001b[2J\u001b[1;1Hcleared', 'cleared'],
    ['\u001b]0;title\u0007after', 'after'],
    ['\u001b]52;c;cHduZWQ=\u001b\\after', 'after'],
    ['\u001b]8;;https://x.test\u001b\\link\u001b]8;;\u001b\\', 'link'],
    ['\u001bPdevice control\u001b\\after', 'after'],
    ['\u001b(Bcharset', 'charset'],
    ['\u001bcreset', 'reset'],
    ['\u001b]unterminated title', ''],
    ['trailing escape\u001b', 'trailing escape'],
    ['\u009b31mC1 CSI', '31mC1 CSI'],
    ['bell\u0007 backspace\u0008 cr\r del\u007f nul\u0000', 'bell backspace cr del nul'],
    ['tabs\tand\nlines stay', 'tabs\tand\nlines stay'],
    ['unicode é 🔑 stays', 'unicode é 🔑 stays'],
  ])('%j -> %j', (input, output) => {
    expect(printable(input)).toBe(output);
  });
});

describe('jsonText', () => {
  test('escapes DEL and C1 in strings, so the JSON is printable and parses back the same', () => {
    const value = { text: 'a\u007fb\u009bc\u001bd', n: 1 };
    const text = jsonText(value);
    // eslint-disable-next-line no-control-regex
    expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(text).toContain('\\u009b');
    expect(JSON.parse(text)).toEqual(value);
  });
});
