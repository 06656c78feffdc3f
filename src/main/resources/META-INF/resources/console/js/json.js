// Payloads are shown as claimq stores them. JSON.parse would turn 0.30000000000000000001 into
// 0.3 and 1.50 into 1.5, so the console re-indents the text it was sent instead of parsing it.
// Numbers an operator types go the other way as exactly: their digits are the JSON sent.

/**
 * A number as an operator typed it (digits, perhaps a minus): sent as those digits, never through
 * a double, which would save 007 as 7 and send 12345678901234567890123 as 1.2345678901234568e+22.
 */
export class Typed {
  constructor(text) {
    this.text = text;
  }
}

/**
 * JSON text for a request body, as JSON.stringify writes it but for each Typed, whose text is
 * written as it is: the service judges what was typed. Answers the text and, for each Typed,
 * {field, text, from, to}: its name as the service spells a field (limit, a.b[1]) and where its
 * token is, in UTF-8 bytes from 0, as the service counts the columns of a body it cannot parse.
 */
export function stringify(value) {
  const typed = [];
  let out = '';
  const write = (v, path) => {
    if (v instanceof Typed) {
      typed.push({ field: path, text: v.text, from: out.length, to: out.length + v.text.length });
      out += v.text;
    } else if (Array.isArray(v)) {
      out += '[';
      v.forEach((e, i) => {
        if (i > 0) out += ',';
        write(e === undefined ? null : e, `${path}[${i}]`);
      });
      out += ']';
    } else if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
      out += '{';
      let first = true;
      for (const [k, e] of Object.entries(v)) {
        if (e === undefined) continue;
        out += `${first ? '' : ','}${JSON.stringify(k)}:`;
        first = false;
        write(e, path ? `${path}.${k}` : k);
      }
      out += '}';
    } else {
      out += JSON.stringify(v);
    }
  };
  write(value, '');
  const bytes = new TextEncoder();
  for (const t of typed) {
    const from = bytes.encode(out.slice(0, t.from)).length;
    t.to = from + bytes.encode(t.text).length;
    t.from = from;
  }
  return { text: out, typed };
}

/** The source text of a top-level member's value in a JSON object's text, or null. */
export function member(text, name) {
  let i = skip(text, 0);
  if (text[i] !== '{') return null;
  i = skip(text, i + 1);
  while (i < text.length && text[i] !== '}') {
    const keyEnd = stringEnd(text, i);
    const key = JSON.parse(text.slice(i, keyEnd));
    const start = skip(text, skip(text, keyEnd) + 1); // past the ':'
    const end = valueEnd(text, start);
    if (key === name) return text.slice(start, end);
    i = skip(text, end);
    if (text[i] === ',') i = skip(text, i + 1);
  }
  return null;
}

/** Deeper than this, indentation would push the text off the page and show nothing more. */
export const MAX_DEPTH = 32;
/** Longer than this once indented, a payload would keep the page from showing (it grows fast). */
export const MAX_CHARS = 1_000_000;

/**
 * The same JSON text, two spaces an indent; strings and numbers exactly as they were. Answers
 * {text, note}: a payload nested deeper than MAX_DEPTH, or that would run past MAX_CHARS once
 * indented, is answered as it came, with a note saying why; an agent shapes payloads, so neither
 * the work done here nor the text shown may grow with depth times length.
 */
export function pretty(text) {
  let out = '';
  let depth = 0;
  const newline = () => `\n${'  '.repeat(depth)}`;
  for (let i = skip(text, 0); i < text.length; i = skip(text, i)) {
    if (out.length > MAX_CHARS) {
      return { text, note: `Shown as stored, not indented: indented, it would be more than ${
        MAX_CHARS.toLocaleString('en')} characters.` };
    }
    const c = text[i];
    if (c === '"') {
      const end = stringEnd(text, i);
      out += text.slice(i, end);
      i = end;
    } else if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      const next = skip(text, i + 1);
      if (text[next] === close) {
        out += c + close;
        i = next + 1;
      } else if (++depth > MAX_DEPTH) {
        return { text, note: `Shown as stored, not indented: it nests deeper than ${MAX_DEPTH} levels.` };
      } else {
        out += c + newline();
        i++;
      }
    } else if (c === '}' || c === ']') {
      depth--;
      out += newline() + c;
      i++;
    } else if (c === ',') {
      out += `,${newline()}`;
      i++;
    } else if (c === ':') {
      out += ': ';
      i++;
    } else {
      const end = scalarEnd(text, i);
      out += text.slice(i, end);
      i = end;
    }
  }
  return { text: out, note: null };
}

function skip(text, i) {
  while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  return i;
}

function stringEnd(text, i) {
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j + 1;
  }
  return text.length;
}

function scalarEnd(text, i) {
  let j = i;
  while (j < text.length && !' \t\n\r,:]}'.includes(text[j])) j++;
  return j;
}

function valueEnd(text, i) {
  if (text[i] === '"') return stringEnd(text, i);
  if (text[i] !== '{' && text[i] !== '[') return scalarEnd(text, i);
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const c = text[j];
    if (c === '"') j = stringEnd(text, j) - 1;
    else if (c === '{' || c === '[') depth++;
    else if ((c === '}' || c === ']') && --depth === 0) return j + 1;
  }
  return text.length;
}
