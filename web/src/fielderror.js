// Messages beside the control that caused them (issue 18: a bad value typed far down the
// page used to revert silently, with a warning only at the top). The message is a <p
// class="field-error" role="alert"> placed after the control's field, linked to it with
// aria-describedby, and the control is marked aria-invalid.
import './fielderror.css';

/** The element a control's message goes after: its .field, layer or label box. */
const anchorOf = (control) => control.closest('.field, .layer, .mini') ?? control;

function boxFor(control) {
  const anchor = anchorOf(control);
  const id = `${control.id || control.getAttribute('aria-label')?.replace(/\W+/g, '-') || 'field'}-error`;
  let box = anchor.querySelector(`:scope > .field-error[data-for="${CSS.escape(id)}"]`);
  if (!box) {
    box = document.createElement('p');
    box.className = 'field-error';
    box.id = id;
    box.dataset.for = id;
    box.setAttribute('role', 'alert');
    if (anchor === control) control.after(box);
    else anchor.append(box);
  }
  return box;
}

/** Shows `text` beside `control` (replacing an earlier message of that control). */
export function showFieldError(control, text) {
  const box = boxFor(control);
  box.textContent = text;
  control.setAttribute('aria-invalid', 'true');
  const ids = new Set((control.getAttribute('aria-describedby') ?? '').split(/\s+/).filter(Boolean));
  ids.add(box.id);
  control.setAttribute('aria-describedby', [...ids].join(' '));
}

/** Removes the message beside `control`, if any. */
export function clearFieldError(control) {
  const anchor = anchorOf(control);
  for (const box of anchor.querySelectorAll(':scope > .field-error')) {
    const ids = (control.getAttribute('aria-describedby') ?? '').split(/\s+/).filter((x) => x && x !== box.id);
    if (ids.length) control.setAttribute('aria-describedby', ids.join(' '));
    else control.removeAttribute('aria-describedby');
    box.remove();
  }
  control.removeAttribute('aria-invalid');
}

/** Removes every field message in `root`. */
export function clearAllFieldErrors(root = document) {
  for (const box of root.querySelectorAll('.field-error')) box.remove();
  for (const el of root.querySelectorAll('[aria-invalid="true"]')) el.removeAttribute('aria-invalid');
}
