/**
 * Case- and accent-insensitive text (search, $contains and the search copy stored on listing
 * items): compatibility decomposition (NFKD: full-width forms, ligatures), full case folding
 * (ß → ss, ẞ → ss, final ς → σ, İ → i), then combining marks removed (é → e, İ's dot). So
 * `istanbul` finds "İstanbul", `strasse` finds "Straße", `cafe` finds "Café". Pure.
 */
export function foldText(text: string): string {
  return text
    .normalize('NFKD')
    // Lower, upper, lower: ẞ → ß → SS → ss; ǅ → ǆ → Ǆ → ǆ.
    .toLowerCase()
    .toUpperCase()
    .toLowerCase()
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/ς/g, 'σ');
}
