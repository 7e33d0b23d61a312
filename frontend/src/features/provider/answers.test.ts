import { describe, expect, it } from 'vitest';

import { readAnswer, statements } from './answers';

describe('reading PDR answers', () => {
  it('reads statements, quoted or not', () => {
    expect(statements('A = 1;\n b="two words" ;\nnot a statement;')).toEqual([
      { key: 'A', value: '1' },
      { key: 'B', value: 'two words' },
    ]);
  });

  it('reads a short PAN as one disposition', () => {
    expect(
      readAnswer(
        'MESSAGE_TYPE = SHORTPAN;\nDISPOSITION = "SUCCESSFUL";\nTIME_STAMP = 2026-11-22T01:03:00Z;\n',
      ),
    ).toEqual({
      messageType: 'SHORTPAN',
      disposition: 'SUCCESSFUL',
      rows: [],
    });
  });

  it('reads a long PAN file by file, directory and all', () => {
    const answer = readAnswer(
      'MESSAGE_TYPE = LONGPAN;\nNO_OF_FILES = 2;\nFILE_DIRECTORY = /a;\nFILE_NAME = x.hdf;\nDISPOSITION = "SUCCESSFUL";\n' +
        'FILE_DIRECTORY = ;\nFILE_NAME = y.hdf;\nDISPOSITION = "NETWORK FAILURE";\n',
    );
    expect(answer.rows).toEqual([
      { what: 'x.hdf', where: '/a', disposition: 'SUCCESSFUL' },
      { what: 'y.hdf', where: '', disposition: 'NETWORK FAILURE' },
    ]);
    expect(answer.disposition).toBeNull();
  });
});
