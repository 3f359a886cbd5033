// CodeMirror 6 editors of the tutorial: an editable JS cell (Shift+Enter / Ctrl+Enter
// runs it; Tab indents; Esc then Tab leaves it) and read-only highlighted code (Burn's
// Rust, Kiln's C++).
import { EditorView, basicSetup } from 'codemirror';
import { EditorState, Prec, StateEffect, StateField } from '@codemirror/state';
import { keymap, Decoration } from '@codemirror/view';
import { indentWithTab } from '@codemirror/commands';
import { javascript } from '@codemirror/lang-javascript';
import { rust } from '@codemirror/lang-rust';
import { cpp } from '@codemirror/lang-cpp';
import { highlightCode, classHighlighter } from '@lezer/highlight';

const theme = EditorView.theme({
  '&': { fontSize: '0.9rem' },
  '.cm-scroller': { fontFamily: 'var(--mono)', lineHeight: '1.45' },
  '.cm-content': { padding: '6px 0' },
  '.cm-error-line': { backgroundColor: 'rgba(197, 34, 31, 0.12)', boxShadow: 'inset 3px 0 0 #c5221f' },
});

// The line of the error that ended the last run, highlighted until the next run.
const setErrorLine = StateEffect.define();
const errorLineMark = Decoration.line({ class: 'cm-error-line' });
const errorLineField = StateField.define({
  create: () => Decoration.none,
  update(deco, tr) {
    let next = deco.map(tr.changes);
    for (const e of tr.effects) {
      if (!e.is(setErrorLine)) continue;
      const n = e.value;
      next = n && n >= 1 && n <= tr.state.doc.lines ? Decoration.set([errorLineMark.range(tr.state.doc.line(n).from)]) : Decoration.none;
    }
    return next;
  },
  provide: (f) => EditorView.decorations.from(f),
});

/** Highlights line `line` (1-based) of the cell as the error's, or clears it (null). */
export function markErrorLine(view, line) {
  view.dispatch({ effects: setErrorLine.of(line ?? null) });
}

/**
 * An editable JS cell editor.
 * @param {HTMLElement} parent
 * @param {string} code
 * @param {{onRun: () => void, label: string}} opts
 * @returns {EditorView}
 */
export function cellEditor(parent, code, { onRun, label }) {
  const run = () => {
    onRun();
    return true;
  };
  return new EditorView({
    parent,
    state: EditorState.create({
      doc: code,
      extensions: [
        Prec.highest(keymap.of([
          { key: 'Shift-Enter', run },
          { key: 'Mod-Enter', run },
          { key: 'Ctrl-Enter', run },
        ])),
        // Tab indents, as in a code editor; Esc then Tab (or Shift+Tab) leaves the editor
        // (CodeMirror's tab-focus escape: keyboard users are never trapped)
        keymap.of([indentWithTab]),
        basicSetup,
        javascript(),
        EditorView.lineWrapping,
        errorLineField,
        theme,
        EditorView.contentAttributes.of({ 'aria-label': label }),
      ],
    }),
  });
}

/** Replaces an editor's text. */
export function setCode(view, code) {
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: code } });
}

const parsers = {
  rust: () => rust().language.parser,
  cpp: () => cpp().language.parser,
  js: () => javascript().language.parser,
  javascript: () => javascript().language.parser,
};

/**
 * Static highlighted code: fills `codeEl` with spans carrying lezer's `tok-*` classes.
 * @param {HTMLElement} codeEl a <code> element
 * @param {string} code
 * @param {string} lang rust | cpp | js
 */
export function highlightInto(codeEl, code, lang) {
  const parser = parsers[lang]?.();
  codeEl.textContent = '';
  if (!parser) {
    codeEl.textContent = code;
    return;
  }
  const tree = parser.parse(code);
  highlightCode(
    code,
    tree,
    classHighlighter,
    (text, classes) => {
      if (!classes) {
        codeEl.append(text);
        return;
      }
      const span = document.createElement('span');
      span.className = classes;
      span.textContent = text;
      codeEl.append(span);
    },
    () => codeEl.append('\n'),
  );
}
