// The archive: finished games, and the replay of one, move by move, trick by trick, hand by
// hand, with the server's verification verdict (ArchiveService.VerifyRecord) and the analysis
// of the hand shown (ArchiveService.AnalyzeHand, asked once per hand when the replay reaches it).
//
// The table at each step is the spectator's view at that version, as WatchGame sends it for
// the finished game (the engine's view: phase, trick, scores); the record adds what a finished
// game reveals: every hand, followed through the log's deals, widow exchanges and plays.

import { analysisPanel, handsOf, playNote, type Analysis } from "./analysis";
import { archive, games, refusal } from "./api";
import { draw, h } from "./dom";
import type { ArchivedGame, GameRecord, VerifyRecordResponse } from "./gen/boneyard/v1/archive_pb";
import { DiscrepancyKind, SignedBy, StoredCopy } from "./gen/boneyard/v1/archive_pb";
import type { Event as GameEvent } from "./gen/boneyard/v1/events_pb";
import type { Play, SeatView } from "./gen/boneyard/v1/view_pb";
import { renderTable, type SeatInfo } from "./table";
import type { Tile } from "./tiles";
import { eventText, gameTitle, scoreUnit } from "./words";

const PAGE = 50;

function when(t: { seconds: bigint } | undefined): string {
  return t ? new Date(Number(t.seconds) * 1000).toLocaleString() : "";
}

export function archivePage(root: HTMLElement, signal: AbortSignal): void {
  const list: ArchivedGame[] = [];
  let next = "";
  let error: string | undefined;
  const preset = h("input", { id: "archive-preset", placeholder: "any" });
  const player = h("input", { id: "archive-player", placeholder: "anyone" });
  const load = async (more: boolean): Promise<void> => {
    try {
      const page = await archive.listArchivedGames(
        { pageSize: PAGE, pageToken: more ? next : "", preset: preset.value.trim(), playerName: player.value.trim() },
        { signal },
      );
      if (!more) list.length = 0;
      list.push(...page.games);
      next = page.nextPageToken;
      error = undefined;
    } catch (e) {
      error = refusal(e);
    }
    render();
  };
  const render = (): void => {
    draw(
      root,
      h("header", {}, h("h1", {}, "The archive"), h("p", {}, "Finished games: replay any of them, and see it verified.")),
      h(
        "form",
        { class: "filters", onsubmit: (e) => { e.preventDefault(); void load(false); } },
        h("label", { for: "archive-preset" }, "preset "), preset, " ",
        h("label", { for: "archive-player" }, "player "), player, " ",
        h("button", { type: "submit" }, "Filter"),
      ),
      error ? h("p", { class: "refusal", role: "alert" }, error) : null,
      list.length ? null : h("p", {}, "No finished game yet."),
      h(
        "ul",
        { class: "games" },
        list.map((g) =>
          h(
            "li",
            { data: { game: g.gameId } },
            h("a", { href: `#/replay/${g.gameId}` }, g.name || `game ${g.gameId.slice(0, 8)}`),
            ` · ${gameTitle(g.rules)} · ${g.seats.map((s) => s.playerName || `seat ${s.seat}`).join(", ")} · ${g.scores.join(" / ")} ${scoreUnit(g.rules)} · ${when(g.finishTime)}`,
          ),
        ),
      ),
      next ? h("button", { type: "button", onclick: () => void load(true) }, "More") : null,
    );
  };
  render();
  void load(false);
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
    const key = s?.signingKey.length ? ` (key ${Array.from(s.signingKey.slice(0, 8), (b) => b.toString(16).padStart(2, "0")).join("")}...)` : "";
    const signed = answer.signedBy === SignedBy.THIS_SERVER
      ? ` Signed by this server${key}.`
      : answer.signedBy === SignedBy.ANOTHER_KEY
        ? ` Signed by another key than this server's${key}.`
        : " Not signed (a record from before records were signed).";
    return h(
      "p",
      { class: "verdict valid", role: "status" },
      `Verified: every move legal, every deal from its committed seed, every score right, the hash chain intact (${s?.events ?? 0n} events, ${s?.hands ?? 0} hands).${signed}${copy}`,
    );
  }
  const d = answer.discrepancy;
  return h(
    "p",
    { class: "verdict invalid", role: "alert" },
    `Not valid: ${d?.message ?? "?"} (event ${d?.event ?? 0n}, ${DiscrepancyKind[d?.kind ?? 0]?.toLowerCase() ?? ""}).${copy}`,
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
      draw(
      root,
        h("header", { class: "game-head" }, h("h1", {}, `Replay · ${gameTitle(record.rules)}`, record.name ? ` · ${record.name}` : ""), h("p", { class: "meta" }, `game ${gameId} · finished ${when(record.finishTime)}`)),
        verdict(checked),
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
      );
    };
    document.addEventListener("keydown", (e) => {
      if (signal.aborted || e.target instanceof HTMLInputElement) return;
      if (e.key === "ArrowRight") go(at + 1);
      if (e.key === "ArrowLeft") go(at - 1);
    }, { signal });
    render();
  })();
}
