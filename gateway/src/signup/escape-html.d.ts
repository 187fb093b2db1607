// escape-html (express's own dependency) ships no types: its one function, as documented.
declare module 'escape-html' {
  function escapeHtml(text: string): string;
  export = escapeHtml;
}
