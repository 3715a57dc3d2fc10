// Tile notation ("7R", "13B", "JK") and the hand's display order. No rule of the
// game lives here: which tiles are wild, what they are worth, and what blocks the
// pile all come with the view (shared_engine/view.py).

export const COLOURS = ["R", "Y", "K", "B"];

export function tileInfo(name) {
  if (name === "JK") return { joker: true, rank: 0, colour: null };
  return { joker: false, rank: parseInt(name, 10), colour: name.slice(-1) };
}

/** A test of wildness from the view's `wild_ranks` (the joker is rank 0). */
export function wildTest(ranks) {
  const wild = new Set(ranks || []);
  return (name) => wild.has(tileInfo(name).rank);
}

/** Hand order: rank, then colour R, Y, K, B; the view's wilds last (2s, then jokers). */
export function sortTiles(tiles, isWild = () => false) {
  const key = (name) => {
    const { joker, rank, colour } = tileInfo(name);
    const group = isWild(name) ? 20 + (joker ? 1 : 0) : rank;
    return group * 4 + (joker ? 0 : COLOURS.indexOf(colour));
  };
  return [...tiles].sort((a, b) => key(a) - key(b));
}

export function multiset(tiles) {
  const counts = new Map();
  for (const tile of tiles) counts.set(tile, (counts.get(tile) || 0) + 1);
  return counts;
}
