// The lobby: the games waiting for players and those in play, the seats this browser holds,
// and a new game from any of the server's presets (GameService.ListPresets) with options, a
// clock, seats for the server's house bots, and the seat to take.

import { games, refusal, requestId } from "./api";
import { h, redraw } from "./dom";
import { TimeoutPolicy } from "./gen/boneyard/v1/events_pb";
import { GameStatus, type GameSummary } from "./gen/boneyard/v1/game_pb";
import type { Preset } from "./gen/boneyard/v1/rules_pb";
import { optionsForm } from "./options";
import { heldSeat, heldSeats, holdSeat, playerName, setPlayerName } from "./seats";
import { gameTitle, statusText } from "./words";

const PAGE = 50;

/** The strategies of the server's house bots (CreateGameRequest.house_bots). */
const HOUSE_BOTS: readonly { strategy: string; label: string }[] = [
  { strategy: "random", label: "random bot" },
  { strategy: "heuristic", label: "heuristic bot" },
  { strategy: "sampler", label: "sampler bot (strongest)" },
  { strategy: "expert", label: "expert bot (experimental)" },
];

function gameLink(game: GameSummary): HTMLElement {
  const taken = game.seats.filter((s) => s.occupied).length;
  const names = game.seats.filter((s) => s.occupied).map((s) => s.playerName).join(", ");
  return h(
    "span",
    { class: "game-line" },
    h("a", { href: `#/game/${game.gameId}` }, game.name || `game ${game.gameId.slice(0, 8)}`),
    ` · ${gameTitle(game.rules)} · ${taken}/${game.seats.length} seated`,
    names ? ` (${names})` : "",
    game.scores.length && game.status === GameStatus.PLAYING ? ` · scores ${game.scores.join(" / ")}` : "",
  );
}

async function takeAndGo(game: GameSummary, seat: number, name: string): Promise<void> {
  const taken = await games.takeSeat({ gameId: game.gameId, seat, playerName: name, requestId: requestId() });
  holdSeat({ gameId: game.gameId, seat: taken.seat, token: taken.seatToken, name });
  location.hash = `#/game/${game.gameId}`;
}

class Lobby {
  private error?: string;
  private open: GameSummary[] = [];
  private playing: GameSummary[] = [];
  private openNext = "";
  private playingNext = "";
  private readonly held = new Map<string, GameSummary>();
  private readonly nameInput = h("input", { id: "lobby-name", value: playerName(), placeholder: "your name" });
  /** Made once the server's presets are known (the first load that reads them). */
  private form?: HTMLElement;

  constructor(private readonly root: HTMLElement, private readonly signal: AbortSignal) {}

  private name(): string {
    const name = this.nameInput.value.trim() || "player";
    setPlayerName(name);
    return name;
  }

  async load(): Promise<void> {
    try {
      const [open, playing, presets] = await Promise.all([
        games.listGames({ status: GameStatus.OPEN, pageSize: PAGE }, { signal: this.signal }),
        games.listGames({ status: GameStatus.PLAYING, pageSize: PAGE }, { signal: this.signal }),
        this.form ? undefined : games.listPresets({}, { signal: this.signal }),
      ]);
      if (presets) this.form = this.newGameForm(presets.presets);
      this.open = open.games;
      this.openNext = open.nextPageToken;
      this.playing = playing.games;
      this.playingNext = playing.nextPageToken;
      this.error = undefined;
    } catch (error) {
      this.error = refusal(error);
    }
    this.render();
    // The seats this browser holds, with where their games are now.
    await Promise.all(
      heldSeats().map(async (seat) => {
        try {
          const game = (await games.getGame({ gameId: seat.gameId }, { signal: this.signal })).game;
          if (game) this.held.set(seat.gameId, game);
        } catch {
          // A game this server does not have (another server's, or a fresh database).
        }
      }),
    );
    this.render();
  }

  private async more(status: GameStatus): Promise<void> {
    const token = status === GameStatus.OPEN ? this.openNext : this.playingNext;
    try {
      const page = await games.listGames({ status, pageSize: PAGE, pageToken: token }, { signal: this.signal });
      if (status === GameStatus.OPEN) { this.open.push(...page.games); this.openNext = page.nextPageToken; }
      else { this.playing.push(...page.games); this.playingNext = page.nextPageToken; }
    } catch (error) {
      this.error = refusal(error);
    }
    this.render();
  }

  private newGameForm(presets: readonly Preset[]): HTMLElement {
    const preset = h("select", { id: "new-preset", name: "preset" }, presets.map((p) => h("option", { value: p.name }, p.description)));
    const chosen = (): Preset | undefined => presets.find((p) => p.name === preset.value);
    const gameName = h("input", { id: "new-name", placeholder: "optional" });
    const options = optionsForm();
    const seat = h("select", { id: "new-seat" });
    const perMove = h("input", { id: "new-per-move", type: "number", min: "0", placeholder: "no clock" });
    const bank = h("input", { id: "new-bank", type: "number", min: "0", placeholder: "0" });
    const policy = h(
      "select",
      { id: "new-policy" },
      h("option", { value: String(TimeoutPolicy.AUTO_PLAY) }, "auto play"),
      h("option", { value: String(TimeoutPolicy.FORFEIT) }, "forfeit"),
    );
    const players = options.element.querySelector<HTMLInputElement>("#option-players");
    // One choice per seat: left to people, or played by a house bot of the server.
    const bots = h("div", { class: "option-grid" });
    const botChoices = (): HTMLSelectElement[] => Array.from(bots.querySelectorAll("select"));
    // Your seat is one no bot plays; a table of bots only is for watching.
    const fillYourSeat = (): void => {
      const botSeats = new Set(botChoices().filter((c) => c.value).map((c) => Number(c.dataset.seat)));
      const free = Array.from({ length: botChoices().length }, (_, i) => i).filter((i) => !botSeats.has(i));
      const kept = seat.value;
      seat.replaceChildren(
        ...free.map((i) => h("option", { value: String(i) }, `seat ${i}`)),
        h("option", { value: "" }, "none: just watch"),
      );
      if ([...seat.options].some((o) => o.value === kept)) seat.value = kept;
    };
    const fillSeats = (): void => {
      const count = Number(players?.value || 0) || (chosen()?.rules?.players ?? 4);
      const kept = botChoices().map((c) => c.value);
      bots.replaceChildren(
        ...Array.from({ length: count }, (_, i) => {
          const choice = h(
            "select",
            { id: `new-bot-${i}`, data: { seat: String(i) }, onchange: fillYourSeat },
            h("option", { value: "" }, "a person"),
            HOUSE_BOTS.map((b) => h("option", { value: b.strategy }, b.label)),
          );
          choice.value = kept[i] ?? "";
          return h("div", { class: "option" }, h("label", { for: `new-bot-${i}` }, `seat ${i} played by`), choice);
        }),
      );
      fillYourSeat();
    };
    const showPreset = (): void => {
      options.showPreset(chosen()?.rules);
      fillSeats();
    };
    preset.addEventListener("change", showPreset);
    players?.addEventListener("input", fillSeats);
    showPreset();
    const create = async (event: SubmitEvent): Promise<void> => {
      event.preventDefault();
      const name = this.name();
      try {
        const perMoveMs = Number(perMove.value || 0);
        const created = await games.createGame({
          rules: options.read(preset.value),
          name: gameName.value.trim(),
          timeControl: perMoveMs > 0 ? { perMoveMs, bankMs: Number(bank.value || 0), policy: Number(policy.value) } : undefined,
          houseBots: botChoices().filter((c) => c.value).map((c) => ({ seat: Number(c.dataset.seat), strategy: c.value })),
          requestId: requestId(),
        });
        const game = created.game!;
        if (seat.value === "") location.hash = `#/game/${game.gameId}`;
        else await takeAndGo(game, Number(seat.value), name);
      } catch (error) {
        this.error = refusal(error);
        this.render();
      }
    };
    return h(
      "form",
      { class: "new-game", aria: { label: "new game" }, onsubmit: (e) => void create(e) },
      h("h2", {}, "New game"),
      h("div", { class: "option" }, h("label", { for: "new-preset" }, "game"), preset),
      h("div", { class: "option" }, h("label", { for: "new-name" }, "name"), gameName),
      h("div", { class: "option" }, h("label", { for: "new-seat" }, "your seat"), seat),
      h("details", { class: "options", open: true }, h("summary", {}, "House bots"), bots),
      h(
        "details",
        { class: "options" },
        h("summary", {}, "Clock"),
        h("div", { class: "option-grid" },
          h("div", { class: "option" }, h("label", { for: "new-per-move" }, "per move (ms)"), perMove),
          h("div", { class: "option" }, h("label", { for: "new-bank" }, "bank (ms)"), bank),
          h("div", { class: "option" }, h("label", { for: "new-policy" }, "when time runs out"), policy)),
      ),
      options.element,
      h("button", { type: "submit", class: "primary" }, "Create the game"),
    );
  }

  private openGames(): HTMLElement {
    return h(
      "section",
      { class: "games", aria: { label: "open games" } },
      h("h2", {}, "Waiting for players"),
      this.open.length ? null : h("p", {}, "No game is waiting for players."),
      h(
        "ul",
        {},
        this.open.map((game) =>
          h(
            "li",
            { data: { game: game.gameId } },
            gameLink(game),
            " ",
            heldSeat(game.gameId)
              ? h("a", { href: `#/game/${game.gameId}` }, "your seat")
              : game.seats.filter((s) => !s.occupied).map((s) =>
                  h("button", {
                    type: "button",
                    onclick: () => void takeAndGo(game, s.seat, this.name()).catch((e) => { this.error = refusal(e); this.render(); }),
                  }, `Join seat ${s.seat}`),
                ),
          ),
        ),
      ),
      this.openNext ? h("button", { type: "button", onclick: () => void this.more(GameStatus.OPEN) }, "More") : null,
    );
  }

  private playingGames(): HTMLElement {
    return h(
      "section",
      { class: "games", aria: { label: "games in play" } },
      h("h2", {}, "In play"),
      this.playing.length ? null : h("p", {}, "No game is being played."),
      h("ul", {}, this.playing.map((game) => h("li", { data: { game: game.gameId } }, gameLink(game), " ", h("a", { href: `#/game/${game.gameId}` }, heldSeat(game.gameId) ? "Play" : "Watch")))),
      this.playingNext ? h("button", { type: "button", onclick: () => void this.more(GameStatus.PLAYING) }, "More") : null,
    );
  }

  private heldGames(): HTMLElement | null {
    const mine = heldSeats().filter((s) => {
      const status = this.held.get(s.gameId)?.status;
      return status === GameStatus.OPEN || status === GameStatus.PLAYING;
    });
    if (!mine.length) return null;
    return h(
      "section",
      { class: "games", aria: { label: "your games" } },
      h("h2", {}, "Your seats"),
      h("ul", {}, mine.map((s) => {
        const game = this.held.get(s.gameId)!;
        return h("li", {}, gameLink(game), ` · seat ${s.seat} as ${s.name} · ${statusText(game.status)} `, h("a", { href: `#/game/${s.gameId}` }, "Resume"));
      })),
    );
  }

  /** Where the new-game form goes until the server's presets are known. */
  private noForm(): HTMLElement {
    return h(
      "section",
      { class: "new-game", aria: { label: "new game" } },
      h("h2", {}, "New game"),
      h("p", {}, this.error ? "The server's presets could not be read: Refresh to try again." : "Reading the server's presets…"),
    );
  }

  render(): void {
    redraw(this.root, () => [
      h("header", {}, h("h1", {}, "Boneyard"), h("p", {}, "Texas 42 and Moon. ", h("label", { for: "lobby-name" }, "Your name: "), this.nameInput, " ", h("button", { type: "button", onclick: () => void this.load() }, "Refresh"))),
      this.error ? h("p", { class: "refusal", role: "alert" }, this.error) : null,
      h("div", { class: "lobby" }, h("div", {}, this.heldGames(), this.openGames(), this.playingGames()), this.form ?? this.noForm()),
    ]);
  }
}

export function lobbyPage(root: HTMLElement, signal: AbortSignal): void {
  const lobby = new Lobby(root, signal);
  lobby.render();
  void lobby.load();
}

