import { describe, expect, test } from 'vitest';
import { likePattern } from '../../../packages/site-forms/src/lib/admin/queries.ts';

describe('the LIKE pattern of a search', () => {
  test.each([
    ['Ada', '%ada%'],
    ['  Ada Lovelace  ', '%ada lovelace%'],
    ['ÉMILE', '%émile%'],
    ['100%', '%100\\%%'],
    ['engine_room', '%engine\\_room%'],
    ['back\\slash', '%back\\\\slash%'],
    ['%_\\', '%\\%\\_\\\\%'],
    // A tab, a line break and a carriage return are text a form may hold.
    ['a\tb', '%a\tb%'],
    ['a\nb', '%a\nb%'],
    ['a\rb', '%a\rb%'],
  ])('%j searches %j', (search, pattern) => {
    expect(likePattern(search)).toBe(pattern);
  });

  test.each([undefined, '', '   ', '\n\t'])('%j is no search', (search) => {
    expect(likePattern(search)).toBeUndefined();
  });

  test.each(['\u0000', '\u0001', 'a\u0008', '\u000b', '\u000c', '\u000e', 'x\u001fy', '\u007f', '  \u0007  '])('%j can match nothing', (search) => {
    expect(likePattern(search)).toBeNull();
  });
});

// Paging by 50 and the four statuses are tested as behaviour: store.test.ts reads pages of 50 on
// both engines, page.test.ts reads each status (pending, sent, failed, spam) from the inbox's
// address and refuses others (deleted, FAILED).
