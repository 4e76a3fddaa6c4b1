import { describe, expect, test } from 'vitest';
import { attachmentDisposition, planAttachments } from '../../../packages/site-forms/src/lib/files/delivery.ts';

describe('the Content-Disposition of a download', () => {
  test('an ASCII name stays readable, quoted, with the RFC 5987 form beside it', () => {
    expect(attachmentDisposition('drawing.pdf')).toBe(`attachment; filename="drawing.pdf"; filename*=UTF-8''drawing.pdf`);
  });

  test('a name beyond ASCII is percent-encoded in filename*, and an ASCII stand-in in filename', () => {
    expect(attachmentDisposition('Größe überprüft.png')).toBe(
      `attachment; filename="Gr__e _berpr_ft.png"; filename*=UTF-8''Gr%C3%B6%C3%9Fe%20%C3%BCberpr%C3%BCft.png`,
    );
  });

  test('quotes, backslashes, line breaks and semicolons never reach the header raw', () => {
    const header = attachmentDisposition('a"b\\c\r\nSet-Cookie: x=1;.txt');
    expect(header).toBe(`attachment; filename="a_b_c__Set-Cookie: x=1_.txt"; filename*=UTF-8''a%22b%5Cc%0D%0ASet-Cookie%3A%20x%3D1%3B.txt`);
    expect(header).not.toMatch(/[\r\n]/);
  });

  test("the characters RFC 5987 lets through raw are kept, and ' ( ) * are encoded", () => {
    expect(attachmentDisposition("it's (1)*.txt")).toBe(`attachment; filename="it's (1)*.txt"; filename*=UTF-8''it%27s%20%281%29%2A.txt`);
  });
});

describe("which files ride with the owner's mail", () => {
  const file = (id: string, size: number) => ({ id, name: `${id}.pdf`, size });

  test('files are attached in their order while the total stays within the limit; the rest are linked', () => {
    const plan = planAttachments([file('a', 4_000), file('b', 5_000), file('c', 2_000), file('d', 1_000)], 10_000);
    expect(plan.attached.map((f) => f.id)).toEqual(['a', 'b', 'd']);
    expect(plan.linked.map((f) => f.id)).toEqual(['c']);
  });

  test('exactly the limit is attached; one byte over is linked', () => {
    expect(planAttachments([file('a', 10_000)], 10_000).attached.map((f) => f.id)).toEqual(['a']);
    expect(planAttachments([file('a', 10_001)], 10_000).linked.map((f) => f.id)).toEqual(['a']);
  });

  test('a limit of 0 links every file', () => {
    const plan = planAttachments([file('a', 1), file('b', 0)], 0);
    expect(plan.attached).toEqual([]);
    expect(plan.linked.map((f) => f.id)).toEqual(['a', 'b']);
  });
});
