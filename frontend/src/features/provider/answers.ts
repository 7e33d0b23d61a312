/**
 * Reading the PVL answers to a PDR (the ECS / Cumulus formats): a PAN says per file whether it
 * was archived, a PDRD says per file group why the PDR was refused. Short forms carry one
 * disposition for everything.
 */

export interface Statement {
  key: string;
  value: string;
}

/** `KEY = value;` statements in order, quotes taken off the values. */
export function statements(text: string): Statement[] {
  const out: Statement[] = [];
  for (const part of text.split(';')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    const key = part.slice(0, at).trim().toUpperCase();
    let value = part.slice(at + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"'))
      value = value.slice(1, -1);
    if (key) out.push({ key, value });
  }
  return out;
}

export interface Disposition {
  /** File name (PAN) or data type of the file group (PDRD). */
  what: string;
  /** Directory of the file, for a PAN. */
  where: string;
  disposition: string;
}

export interface Answer {
  messageType: string;
  /** The one disposition of a short answer. */
  disposition: string | null;
  rows: Disposition[];
}

/** Rows of a LONGPAN (one per file) or LONGPDRD (one per file group). */
export function readAnswer(text: string): Answer {
  const answer: Answer = { messageType: '', disposition: null, rows: [] };
  let directory = '';
  let current: Disposition | null = null;
  for (const { key, value } of statements(text)) {
    if (key === 'MESSAGE_TYPE') answer.messageType = value.toUpperCase();
    else if (key === 'FILE_DIRECTORY') directory = value;
    else if (key === 'FILE_NAME' || key === 'DATA_TYPE') {
      current = { what: value, where: key === 'FILE_NAME' ? directory : '', disposition: '' };
      answer.rows.push(current);
      directory = '';
    } else if (key === 'DISPOSITION' || key === 'FILE_GRP_DISPOSITION') {
      if (current) current.disposition = value;
      else answer.disposition = value;
    }
  }
  return answer;
}
