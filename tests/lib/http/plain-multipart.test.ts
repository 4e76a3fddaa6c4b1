import { describe, expect, it } from 'vitest';
import { readPlainMultipart } from '../../../packages/site-forms/src/lib/http/plain-multipart.ts';

// The reference is the runtime's own multipart parser, the one readForm falls back to: wherever
// the plain reader answers, it must answer what that parser answers.
const BOUNDARY = '----WebKitFormBoundaryQ7xk2LmN9pR4sT1v';
const TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

async function reference(body: Buffer, contentType = TYPE): Promise<Array<[string, string | File]> | 'refused'> {
  try {
    return [...(await new Response(new Uint8Array(body), { headers: { 'content-type': contentType } }).formData())];
  } catch {
    return 'refused';
  }
}

const HEADER = 'Content-Disposition: form-data; name=';

function browserBody(fields: Array<[string, string]>, boundary = BOUNDARY): Buffer {
  const parts = fields.map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
  return Buffer.from(`${parts.join('')}--${boundary}--\r\n`);
}

const CONTACT: Array<[string, string]> = [
  ['name', 'Ada Lovelace'],
  ['email', 'ada@example.com'],
  ['message', 'A message of reasonable length.'],
  ['honeypot', ''],
];

describe('readPlainMultipart', () => {
  it.each([
    ['a contact post', CONTACT],
    ['an empty value', [['honeypot', '']]],
    ['letters outside ASCII', [['message', 'Grüße aus Köln — 東京 🚀']]],
    // Each starts with bytes of a byte-order mark (EF BB BF) and is none: U+FFFD (EF BF BD), U+FE0F (EF B8 8F), U+FEFB (EF BB BB), U+FE3F (EF B8 BF), U+3EFF (E3 BB BF).
    [
      'values that start as a byte-order mark does',
      [
        ['a', '\uFFFD1'],
        ['b', '\uFE0F2'],
        ['c', '\uFEFB3'],
        ['d', '\uFE3F4'],
        ['e', '\u3EFF5'],
      ],
    ],
    ['line breaks and dashes in a value', [['message', 'one\r\ntwo\n--three\r\n--\r\n- four']]],
    [
      'a name repeated (both kept, in order)',
      [
        ['topic', 'a'],
        ['topic', 'b'],
      ],
    ],
    [
      'names with spaces and punctuation',
      [
        ['a b', '1'],
        ['x[y]', '2'],
        ['_next', '/thanks?x=1&y=2'],
      ],
    ],
  ] as Array<[string, Array<[string, string]>]>)('reads %s as the full parser does', async (_, fields) => {
    const body = browserBody(fields);
    const plain = readPlainMultipart(body, TYPE);
    expect(plain).toEqual(fields);
    expect(plain).toEqual(await reference(body));
  });

  it('reads the closing delimiter without a final line break, and a boundary Node’s FormData makes', async () => {
    const body = browserBody(CONTACT).subarray(0, -2);
    expect(readPlainMultipart(body, TYPE)).toEqual(await reference(body));
    const request = new Request('http://x/', {
      method: 'POST',
      body: (() => {
        const f = new FormData();
        for (const [n, v] of CONTACT) f.append(n, v);
        return f;
      })(),
    });
    const nodeType = request.headers.get('content-type')!;
    const nodeBody = Buffer.from(await request.arrayBuffer());
    expect(readPlainMultipart(nodeBody, nodeType)).toEqual(CONTACT);
  });

  it.each([
    [
      'a file part',
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhi\r\n--${BOUNDARY}--\r\n`),
      TYPE,
    ],
    [
      'a second header',
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="a"\r\nContent-Type: text/plain\r\n\r\nhi\r\n--${BOUNDARY}--\r\n`),
      TYPE,
    ],
    ['an escaped quote in a name', browserBody([['a%22b', '1']]), TYPE],
    ['a backslash in a name', browserBody([['a\\b', '1']]), TYPE],
    ['a value starting with a byte-order mark', browserBody([['m', '\uFEFFhello']]), TYPE],
    ['the boundary’s text inside a value', browserBody([['m', `x${BOUNDARY}y`]]), TYPE],
    ['a line break before the first boundary', Buffer.concat([Buffer.from('\r\n'), browserBody(CONTACT)]), TYPE],
    ['a delimiter with “x-” for its dashes', Buffer.from(`--${BOUNDARY}\r\n${HEADER}"a"\r\n\r\nhello\r\nx-${BOUNDARY}--\r\n`), TYPE],
    ['a delimiter with “-x” for its dashes', Buffer.from(`--${BOUNDARY}\r\n${HEADER}"a"\r\n\r\nhello\r\n-x${BOUNDARY}--\r\n`), TYPE],
    [
      'two other bytes for the line break after a delimiter',
      Buffer.from(`--${BOUNDARY}\r\n${HEADER}"a"\r\n\r\n1\r\n--${BOUNDARY}ab${HEADER}"b"\r\n\r\n2\r\n--${BOUNDARY}--\r\n`),
      TYPE,
    ],
    ['a delimiter with “x\\n” for its line break', Buffer.from(`--${BOUNDARY}\r\n${HEADER}"a"\r\n\r\nhellox\n--${BOUNDARY}--\r\n`), TYPE],
    ['a delimiter with “\\rx” for its line break', Buffer.from(`--${BOUNDARY}\r\n${HEADER}"a"\r\n\r\nhello\rx--${BOUNDARY}--\r\n`), TYPE],
    ['a part without the line break before its delimiter', Buffer.from(`--${BOUNDARY}\r\n${HEADER}"a"\r\n\r\n--${BOUNDARY}--\r\n`), TYPE],
    ['a name without its closing quote', Buffer.from(`--${BOUNDARY}\r\n${HEADER}"abc\r\n\r\n1\r\n--${BOUNDARY}--\r\n`), TYPE],
    ['“\\rx” after a delimiter', Buffer.from(`--${BOUNDARY}\r\n${HEADER}"a"\r\n\r\n1\r\n--${BOUNDARY}\rx${HEADER}"b"\r\n\r\n2\r\n--${BOUNDARY}--\r\n`), TYPE],
    ['“x\\n” after a delimiter', Buffer.from(`--${BOUNDARY}\r\n${HEADER}"a"\r\n\r\n1\r\n--${BOUNDARY}x\n${HEADER}"b"\r\n\r\n2\r\n--${BOUNDARY}--\r\n`), TYPE],
    ['a closing delimiter with “x-” for its dashes', Buffer.concat([browserBody(CONTACT).subarray(0, -4), Buffer.from('x-')]), TYPE],
    ['a closing delimiter followed by “x\\n”', Buffer.concat([browserBody(CONTACT).subarray(0, -2), Buffer.from('x\n')]), TYPE],
    ['a closing delimiter followed by “\\rx”', Buffer.concat([browserBody(CONTACT).subarray(0, -2), Buffer.from('\rx')]), TYPE],
    ['two other bytes after the closing dashes', Buffer.concat([browserBody(CONTACT).subarray(0, -2), Buffer.from('ab')]), TYPE],
    ['bytes after the closing delimiter', Buffer.concat([browserBody(CONTACT), Buffer.from('epilogue')]), TYPE],
    ['no closing delimiter', Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="a"\r\n\r\nhi\r\n`), TYPE],
    ['a quoted boundary', browserBody(CONTACT), `multipart/form-data; boundary="${BOUNDARY}"`],
    ['a charset parameter', browserBody(CONTACT), `${TYPE}; charset=utf-8`],
    ['a lower-case header', Buffer.from(browserBody(CONTACT).toString().replaceAll('Content-Disposition', 'content-disposition')), TYPE],
  ])('leaves %s to the full parser', (_, body, contentType) => {
    expect(readPlainMultipart(body, contentType)).toBeUndefined();
  });

  it('never answers otherwise than the full parser on thousands of altered posts', async () => {
    // Seeded, so a failure names a case that can be replayed.
    let seed = 41;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const pieces = [
      '\r\n',
      '\r',
      '\n',
      '--',
      '-',
      '"',
      '%22',
      '\\',
      BOUNDARY,
      BOUNDARY.slice(0, 10),
      '\uFEFF',
      ';',
      ':',
      ' ',
      'é',
      'x',
      'name="y"',
      'Content-Disposition: form-data; name="z"\r\n\r\n',
    ];
    const original = browserBody(CONTACT).toString();
    let answered = 0;
    let same = 0;
    for (let round = 0; round < 3000; round++) {
      let text = original;
      for (let edits = 1 + random(3); edits > 0; edits--) {
        const at = random(text.length + 1);
        const cut = random(4) === 0 ? random(6) : 0;
        text = text.slice(0, at) + pieces[random(pieces.length)] + text.slice(at + cut);
      }
      const body = Buffer.from(text);
      const plain = readPlainMultipart(body, TYPE);
      if (plain === undefined) continue;
      answered++;
      const expected = await reference(body);
      expect({ text, fields: plain }).toEqual({ text, fields: expected });
      same++;
    }
    // The altered posts must exercise the reader, not only its refusals.
    expect(answered).toBeGreaterThan(300);
    expect(same).toBe(answered);
  });
});
