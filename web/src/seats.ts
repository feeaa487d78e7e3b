// The seats this browser holds, kept in localStorage so that a reload (or a new tab) resumes
// the seat: a seat token is shown once by TakeSeat and never again.

export interface HeldSeat {
  gameId: string;
  seat: number;
  token: string;
  name: string;
}

const PREFIX = "boneyard.seat.";
const NAME = "boneyard.name";

function parse(text: string | null): HeldSeat | undefined {
  if (!text) return undefined;
  try {
    const v = JSON.parse(text) as Partial<HeldSeat>;
    if (typeof v.gameId === "string" && typeof v.seat === "number" && typeof v.token === "string") {
      return { gameId: v.gameId, seat: v.seat, token: v.token, name: String(v.name ?? "") };
    }
  } catch {
    // Not ours (or damaged): as if absent.
  }
  return undefined;
}

export function heldSeat(gameId: string): HeldSeat | undefined {
  return parse(localStorage.getItem(PREFIX + gameId));
}

export function holdSeat(seat: HeldSeat): void {
  localStorage.setItem(PREFIX + seat.gameId, JSON.stringify(seat));
}

export function dropSeat(gameId: string): void {
  localStorage.removeItem(PREFIX + gameId);
}

export function heldSeats(): HeldSeat[] {
  const out: HeldSeat[] = [];
  for (let i = 0; i < localStorage.length; i++) {
    const key = localStorage.key(i);
    if (key?.startsWith(PREFIX)) {
      const seat = parse(localStorage.getItem(key));
      if (seat) out.push(seat);
    }
  }
  return out;
}

export function playerName(): string {
  return localStorage.getItem(NAME) ?? "";
}

export function setPlayerName(name: string): void {
  localStorage.setItem(NAME, name);
}

/** A choice of the lobby's kept for the next visit ("quick.game" ...); `fallback` when none. */
export function remembered(key: string, fallback: string): string {
  return localStorage.getItem(`boneyard.${key}`) ?? fallback;
}

export function remember(key: string, value: string): void {
  localStorage.setItem(`boneyard.${key}`, value);
}
