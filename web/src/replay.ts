// The archive: finished games, and the replay of one, move by move, trick by trick, hand by
// hand, with the server's verification verdict (ArchiveService.VerifyRecord) and the analysis
// of the hand shown (ArchiveService.AnalyzeHand, asked once per hand when the replay reaches it).
//
// The table at each step is the spectator's view at that version, as WatchGame sends it for
// the finished game (the engine's view: phase, trick, scores); the record adds what a finished
// game reveals: every hand, followed through the log's deals, widow exchanges and plays.

import { analysisPanel, handsOf, playNote, type Analysis } from "./analysis";
import { archive, games, refusal } from "./api";
import { h, redraw } from "./dom";
import {
  type ArchivedGame, DiscrepancyKind, type Event as GameEvent, type GameRecord,
  type GetSigningKeyResponse, type Play, type Preset, RecordFileFormat, type RecordSeat,
  type SeatView, SignedBy, StoredCopy, type VerifyRecordResponse,
} from "@boneyard/client";
import { renderTable, type SeatInfo } from "./table";
import type { Tile } from "./tiles";
import { eventText, gameTitle, scoreUnit } from "./words";

const PAGE = 50;

function when(t: { seconds: bigint } | undefined): string {
  return t ? new Date(Number(t.seconds) * 1000).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }) : "";
}

/** A seat's name in a list of finished games: "seat 2" for a seat nobody took, and a name two
 * seats share (bots of one strategy) told apart by its seat, "heuristic bot (seat 1)". */
function seatName(seat: RecordSeat, seats: readonly RecordSeat[]): string {
  if (!seat.playerName) return `seat ${seat.seat}`;
  return seats.filter((s) => s.playerName === seat.playerName).length > 1 ? `${seat.playerName} (seat ${seat.seat})` : seat.playerName;
}

/** Who won, by name: the winning seats the server lists ("Alice & Carol"). */
function winnerText(game: ArchivedGame): string {
  const names = game.seats.filter((s) => game.winningSeats.includes(s.seat)).map((s) => seatName(s, game.seats));
  return names.length ? names.join(" & ") : `team ${game.winner}`;
}

/** The server's signing key as a person compares it: the fingerprint GetSigningKey serves. */
function signingKeyNote(key: GetSigningKeyResponse | undefined): HTMLElement | null {
  if (!key?.fingerprint) return null;
  return h(
    "p",
    { class: "signing-key" },
    "Every record here is signed by this server's key, fingerprint ",
    h("strong", { class: "fingerprint" }, key.fingerprint),
    ". It should read the same as ",
    h("code", {}, "boneyard public-key"),
    " prints, and as the server's operator reads from ",
    h("code", {}, "boneyard-server admin signing-key"),
    ".",
  );
}

export function archivePage(root: HTMLElement, signal: AbortSignal): void {
  const list: ArchivedGame[] = [];
  let next = "";
  let error: string | undefined;
  let loaded = false;
  let presets: readonly Preset[] = [];
  let key: GetSigningKeyResponse | undefined;
  // The preset filter offers the server's own presets (GameService.ListPresets), never free text.
  const preset = h("select", { id: "archive-preset", onchange: () => void load(false) }, h("option", { value: "" }, "any game"));
  const player = h("input", { id: "archive-player", placeholder: "anyone", aria: { describedby: "archive-player-hint" } });
  const description = (name: string): string => presets.find((p) => p.name === name)?.description ?? "";
  const load = async (more: boolean): Promise<void> => {
    try {
      const page = await archive.listArchivedGames(
        { pageSize: PAGE, pageToken: more ? next : "", preset: preset.value, playerName: player.value.trim() },
        { signal },
      );
      if (!more) list.length = 0;
      list.push(...page.games);
      next = page.nextPageToken;
      error = undefined;
    } catch (e) {
      error = refusal(e);
    }
    loaded = true;
    render();
  };
  const filtered = (): boolean => preset.value !== "" || player.value.trim() !== "";
  const row = (g: ArchivedGame): HTMLElement =>
    h(
      "tr",
      { data: { game: g.gameId } },
      h("th", { scope: "row", data: { label: "Game" } }, h("a", { href: `#/replay/${g.gameId}` }, g.name || `game ${g.gameId.slice(0, 8)}`)),
      h(
        "td",
        { class: "preset", data: { label: "Preset" } },
        h("span", { class: "preset-name" }, g.rules?.preset ?? ""),
        description(g.rules?.preset ?? "") ? h("small", {}, description(g.rules?.preset ?? "")) : null,
      ),
      h("td", { class: "players", data: { label: "Players" } }, g.seats.map((s) => seatName(s, g.seats)).join(", ")),
      h("td", { class: "winner", data: { label: "Winner" } }, winnerText(g)),
      h("td", { class: "final", data: { label: "Score" } }, `${g.scores.join(" / ")} ${scoreUnit(g.rules)}`),
      h("td", { class: "finished", data: { label: "Finished" } }, when(g.finishTime)),
    );
  const render = (): void => {
    redraw(root, () => [
      h(
        "header",
        {},
        h("h1", {}, "The archive"),
        h("p", {}, "Finished games: replay any of them move by move, see it verified, and download its record."),
        signingKeyNote(key),
      ),
      h(
        "form",
        { class: "filters", aria: { label: "filter the games" }, onsubmit: (e) => { e.preventDefault(); void load(false); } },
        h("span", { class: "filter" }, h("label", { for: "archive-preset" }, "Preset"), preset),
        h("span", { class: "filter" }, h("label", { for: "archive-player" }, "Player"), player),
        h("button", { type: "submit" }, "Filter"),
        h("p", { class: "hint", id: "archive-player-hint" }, "A player's games: any seat taken under that name, in any case."),
      ),
      error ? h("p", { class: "refusal", role: "alert" }, error) : null,
      !loaded
        ? h("p", {}, "Loading the finished games...")
        : list.length
          ? h(
              "table",
              { class: "archive-games" },
              h("caption", { class: "sr-only" }, "Finished games, the most recently finished first"),
              h(
                "thead",
                {},
                h("tr", {}, ["Game", "Preset", "Players", "Winner", "Score", "Finished"].map((c) => h("th", { scope: "col" }, c))),
              ),
              h("tbody", {}, list.map(row)),
            )
          : h("p", { role: "status" }, filtered() ? "No finished game matches these filters." : "No finished game yet."),
      next ? h("button", { type: "button", onclick: () => void load(true) }, "More games") : null,
    ]);
  };
  render();
  void load(false);
  games.listPresets({}, { signal }).then(
    (answer) => {
      presets = answer.presets;
      preset.append(...presets.map((p) => h("option", { value: p.name }, `${p.name}: ${p.description}`)));
      render();
    },
    (e: unknown) => { error = refusal(e); render(); },
  );
  archive.getSigningKey({}, { signal }).then(
    (answer) => { key = answer; render(); },
    () => { /* a server that does not sign records: nothing to compare */ },
  );
}

/** Every seat's tiles after each event of the record (index = version). */
function handsThrough(record: GameRecord): { hands: Tile[][][]; tricks: Play[][] } {
  const players = record.seats.length;
  let hands: Tile[][] = Array.from({ length: players }, () => []);
  let trick: Play[] = [];
  const out: Tile[][][] = [hands];
  const tricks: Play[][] = [trick];
  for (const { event } of record.events) {
    const kind = event?.kind;
    hands = hands.map((hand) => [...hand]);
    switch (kind?.case) {
      case "handDealt":
        hands = (kind.value.deal?.hands ?? []).map((t) => [...t.tiles]);
        trick = [];
        break;
      case "widowExchanged": {
        const { seat, taken, discard } = kind.value;
        const tiles = hands[seat].filter((t) => t !== discard);
        if (taken !== undefined) tiles.push(taken);
        hands[seat] = tiles.sort((a, b) => a - b);
        break;
      }
      case "tilePlayed":
        hands[kind.value.seat] = hands[kind.value.seat].filter((t) => t !== kind.value.tile);
        trick = [...trick, { seat: kind.value.seat, tile: kind.value.tile, faceDown: false } as Play];
        break;
      case "trickWon":
        trick = [];
        break;
    }
    out.push(hands);
    tricks.push(trick);
  }
  return { hands: out, tricks };
}

function verdict(answer: VerifyRecordResponse): HTMLElement {
  const copy = answer.storedCopy === StoredCopy.SAME
    ? " This server's stored copy is the same, event for event."
    : answer.storedCopy === StoredCopy.DIFFERENT
      ? " This server holds the game with another log."
      : "";
  if (answer.valid) {
    const s = answer.summary;
    // The fingerprint the server computed (GetSigningKey's, `boneyard verify`'s), never one of our own.
    const key = s?.signingKeyFingerprint ? [" (key fingerprint ", h("span", { class: "fingerprint" }, s.signingKeyFingerprint), ")"] : [];
    const signed = answer.signedBy === SignedBy.THIS_SERVER
      ? [" Signed by this server", key, "."]
      : answer.signedBy === SignedBy.ANOTHER_KEY
        ? [" Signed by another key than this server's", key, "."]
        : [" Not signed (a record from before records were signed)."];
    return h(
      "p",
      { class: "verdict valid", role: "status" },
      `Verified: every move legal, every deal from its committed seed, every score right, the hash chain intact (${s?.events ?? 0n} events, ${s?.hands ?? 0} hands).`,
      signed,
      copy,
    );
  }
  const d = answer.discrepancy;
  return h(
    "p",
    { class: "verdict invalid", role: "alert" },
    `Not valid: ${d?.message ?? "?"} (event ${d?.event ?? 0n}, ${DiscrepancyKind[d?.kind ?? 0]?.toLowerCase() ?? ""}).${copy}`,
  );
}

type FileForm = "json" | "text";

/** Save a finished game's record as the server exports it (ArchiveService.ExportRecord): the
 * very file `boneyard export` writes, JSON or the text notation. */
async function downloadRecord(gameId: string, form: FileForm, signal: AbortSignal): Promise<void> {
  const file = await archive.exportRecord(
    { gameId, format: form === "json" ? RecordFileFormat.JSON : RecordFileFormat.TEXT, site: location.host },
    { signal },
  );
  const url = URL.createObjectURL(new Blob([file.content], { type: file.mediaType }));
  const link = h("a", { href: url, hidden: true });
  link.download = file.fileName;
  document.body.append(link);
  link.click();
  link.remove();
  // The browser has the file once the click is handled; the URL goes with the page at the latest.
  const revoke = (): void => URL.revokeObjectURL(url);
  signal.addEventListener("abort", revoke, { once: true });
  setTimeout(revoke, 60_000);
}

/** The record's downloads: JSON (what `boneyard verify` checks) and the text notation. Made
 * once per replay and kept across its redraws, so that a button keeps the focus it has. */
function downloads(gameId: string, signal: AbortSignal): HTMLElement {
  let busy = false;
  const error = h("p", { class: "refusal", role: "alert", hidden: true });
  const get = (form: FileForm, button: HTMLButtonElement, label: string): void => {
    if (busy) return;
    busy = true;
    button.textContent = "Preparing...";
    button.setAttribute("aria-busy", "true");
    error.hidden = true;
    downloadRecord(gameId, form, signal).then(
      () => {},
      (e: unknown) => { error.textContent = refusal(e); error.hidden = false; },
    ).finally(() => {
      busy = false;
      button.textContent = label;
      button.removeAttribute("aria-busy");
    });
  };
  const button = (form: FileForm, label: string): HTMLButtonElement => {
    const b: HTMLButtonElement = h("button", { type: "button", onclick: () => get(form, b, label) }, label);
    return b;
  };
  return h(
    "section",
    { class: "downloads", aria: { label: "download the record" } },
    h("span", { class: "downloads-label" }, "The record:"),
    button("json", "Download JSON"),
    button("text", "Download as text"),
    h("p", { class: "hint" }, "JSON is the signed record that ", h("code", {}, "boneyard verify"), " checks; the text is the game in the notation players read, which ", h("code", {}, "boneyard import"), " reads back."),
    error,
  );
}

function isEvent(event: GameEvent | undefined, kinds: string[]): boolean {
  return event?.kind.case !== undefined && kinds.includes(event.kind.case);
}

export function replayPage(root: HTMLElement, gameId: string, signal: AbortSignal): void {
  void (async () => {
    root.replaceChildren(h("p", {}, "Loading the record..."));
    let record: GameRecord;
    let checked: VerifyRecordResponse;
    const views: SeatView[] = [];
    try {
      record = (await archive.getRecord({ gameId }, { signal })).record!;
      checked = await archive.verifyRecord({ record }, { signal });
      for await (const m of games.watchGame({ gameId, fromVersion: 0n }, { signal })) {
        if (m.view) views[Number(m.version)] = m.view;
      }
    } catch (error) {
      root.replaceChildren(h("p", { class: "refusal", role: "alert" }, refusal(error)));
      return;
    }
    const { hands, tricks } = handsThrough(record);
    const { handAt, plays } = handsOf(record);
    const analyses = new Map<number, Analysis>();
    const saving = downloads(gameId, signal);
    const analyse = (hand: number): void => {
      analyses.set(hand, { state: "loading" });
      archive.analyzeHand({ gameId, handNumber: hand }, { signal }).then(
        (answer) => { analyses.set(hand, { state: "done", answer }); },
        (error: unknown) => { analyses.set(hand, { state: "refused", why: refusal(error) }); },
      ).finally(() => { if (!signal.aborted) render(); });
    };
    const last = record.events.length;
    const seats: SeatInfo[] = record.seats.map((s) => ({ name: s.playerName, occupied: true }));
    // A name two seats share (bots of one strategy) is told apart by its seat.
    const named = record.seats.map((s) => s.playerName);
    const name = (seat: number): string => {
      const n = named[seat];
      if (!n) return `seat ${seat}`;
      return named.filter((m) => m === n).length > 1 ? `${n} (seat ${seat})` : n;
    };
    const eventAt = (i: number): GameEvent | undefined => record.events[i - 1]?.event;
    const first = Math.max(1, record.events.findIndex((e) => e.event?.kind.case === "handDealt") + 1);
    let at = first;
    const find = (from: number, step: 1 | -1, kinds: string[]): number => {
      for (let i = from + step; i >= first && i <= last; i += step) if (isEvent(eventAt(i), kinds)) return i;
      return step > 0 ? last : first;
    };
    const go = (i: number): void => {
      at = Math.min(last, Math.max(first, i));
      render();
    };
    const steps: [string, () => number][] = [
      ["Start", () => first],
      ["Previous hand", () => find(at, -1, ["handDealt"])],
      ["Previous trick", () => find(at, -1, ["trickWon"])],
      ["Previous move", () => at - 1],
      ["Next move", () => at + 1],
      ["Next trick", () => find(at, 1, ["trickWon"])],
      ["Next hand", () => find(at, 1, ["handScored"])],
      ["End", () => last],
    ];
    const slider = h("input", { type: "range", id: "replay-step", min: String(first), max: String(last), aria: { label: "step" } });
    slider.addEventListener("input", () => go(Number(slider.value)));
    const render = (): void => {
      const view = views[at];
      const board = view
        ? renderTable({
            view: { ...view, currentTrick: tricks[at] } as SeatView,
            rules: record.rules,
            seats,
            openHands: hands[at],
          })
        : h("p", {}, `No view of version ${at}.`);
      const event = eventAt(at);
      slider.value = String(at);
      const hand = handAt[at] ?? 0;
      if (hand && !analyses.has(hand)) analyse(hand);
      const analysis = analyses.get(hand);
      const places = plays.get(hand) ?? [];
      const playIndex = places.findIndex((p) => p.version === at);
      const played = analysis?.state === "done" && playIndex >= 0 ? analysis.answer.plays[playIndex] : undefined;
      // redraw: the elements kept across steps (the slider, the downloads) keep their focus.
      redraw(root, () => [
        h("header", { class: "game-head" }, h("h1", {}, `Replay · ${gameTitle(record.rules)}`, record.name ? ` · ${record.name}` : ""), h("p", { class: "meta" }, `game ${gameId} · finished ${when(record.finishTime)}`)),
        verdict(checked),
        saving,
        h(
          "nav",
          { class: "replay-controls", aria: { label: "replay" } },
          steps.map(([label, target]) => h("button", { type: "button", onclick: () => go(target()) }, label)),
          slider,
        ),
        h("p", { class: "step", role: "status", aria: { label: "this step" } }, `Event ${at} of ${last}: ${event ? eventText(event, name, eventAt(at - 1)) ?? event.kind.case : ""}`),
        played && analysis?.state === "done"
          ? h("p", { class: `step-analysis${played.cost > 0 ? " an-costly" : ""}` }, playNote(analysis.answer, played, name))
          : null,
        board,
        hand && analysis
          ? analysisPanel({ hand, analysis, places, at, name, go, retry: () => { analyse(hand); render(); } })
          : null,
      ]);
    };
    document.addEventListener("keydown", (e) => {
      if (signal.aborted || e.target instanceof HTMLInputElement) return;
      if (e.key === "ArrowRight") go(at + 1);
      if (e.key === "ArrowLeft") go(at - 1);
    }, { signal });
    render();
  })();
}
