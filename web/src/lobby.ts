// The lobby: "Play the computer" at the top (one click: a game of Texas 42 or Moon against the
// server's house bots, your seat taken), the games waiting for players and those in play, the
// seats this browser holds, and a new game from any of the server's presets
// (GameService.ListPresets) with options, a clock, seats for the server's house bots, and the
// seat to take (yours unless you choose to watch).
//
// The lists are live: GameService.WatchLobby pushes the whole lobby, then each game that comes,
// changes or leaves; the page never polls. A stream that drops is opened again after a short
// wait, and its first message replaces what the page held.

import { Code, ConnectError } from "@connectrpc/connect";
import { games, refusal, requestId } from "./api";
import { h, redraw } from "./dom";
import { GameStatus, type GameSummary, type Preset, TimeoutPolicy, type WatchLobbyResponse } from "@boneyard/client";
import { BACKOFF_MS, FINAL, sleep } from "./follow";
import { optionsForm } from "./options";
import { heldSeat, heldSeats, holdSeat, playerName, remembered, remember, setPlayerName } from "./seats";
import { gameTitle, statusText } from "./words";

/** The most games of each status the lobby shows (the oldest first). */
const SHOWN = 100;

/** The strategies of the server's house bots (CreateGameRequest.house_bots). */
const HOUSE_BOTS: readonly { strategy: string; label: string; strength: string }[] = [
  { strategy: "random", label: "random bot", strength: "Beginner: plays any legal tile" },
  { strategy: "heuristic", label: "heuristic bot", strength: "Casual: plays by rules of thumb" },
  { strategy: "sampler", label: "sampler bot (strongest)", strength: "Strong: thinks ahead (slower)" },
  { strategy: "expert", label: "expert bot (experimental)", strength: "Expert (experimental)" },
];

/** The games "Play the computer" offers: the server's standard preset of each family. */
const QUICK_GAMES: readonly { preset: string; label: string }[] = [
  { preset: "texas42", label: "Texas 42" },
  { preset: "moon", label: "Moon" },
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
  /** The games of the lobby, open and in play, in the server's order (the oldest first). */
  private lobby = new Map<string, GameSummary>();
  /** Whether the lobby's stream is open: "loading" until its first message. */
  private connection: "loading" | "live" | "reconnecting" | "stopped" = "loading";
  private readonly held = new Map<string, GameSummary>();
  private readonly nameInput = h("input", { id: "lobby-name", value: playerName(), placeholder: "your name" });
  /** Made once the server's presets are known (the first load that reads them). */
  private form?: HTMLElement;
  /** "Play the computer": made once, so that a redraw keeps what is chosen and focused. */
  private readonly quick: HTMLElement = this.quickPlay();

  constructor(private readonly root: HTMLElement, private readonly signal: AbortSignal) {}

  private name(): string {
    const name = this.nameInput.value.trim() || "player";
    setPlayerName(name);
    return name;
  }

  /** Follow the lobby until the page is left: the stream opened again after a wait when it
   * drops (a server restart, the network), each first message replacing what was held. */
  async watch(): Promise<void> {
    void this.loadHeld();
    let failures = 0;
    while (!this.signal.aborted) {
      if (!this.form) void this.loadPresets();
      try {
        const stream = games.watchLobby(
          { statuses: [GameStatus.OPEN, GameStatus.PLAYING], maxGames: SHOWN },
          { signal: this.signal },
        );
        for await (const message of stream) {
          failures = 0;
          this.connection = "live";
          this.apply(message);
          this.render();
        }
      } catch (error) {
        if (this.signal.aborted) return;
        const e = ConnectError.from(error);
        if (FINAL.has(e.code)) {
          this.connection = "stopped";
          this.error = refusal(e);
          this.render();
          return;
        }
      }
      if (this.signal.aborted) return;
      // The stream ended or broke (UNAVAILABLE, a network error): try again after a wait.
      this.connection = "reconnecting";
      this.render();
      await sleep(BACKOFF_MS[Math.min(failures++, BACKOFF_MS.length - 1)], this.signal);
    }
  }

  private apply(message: WatchLobbyResponse): void {
    if (message.reset) this.lobby = new Map();
    for (const game of message.games) {
      this.lobby.set(game.gameId, game);
      if (heldSeat(game.gameId)) this.held.set(game.gameId, game);
    }
    for (const id of message.removedGameIds) {
      this.lobby.delete(id);
      // A seat of this browser's whose game left the lobby: where is it now (over, or only
      // pushed out of a full lobby)?
      if (this.held.has(id)) void this.loadHeld(id);
    }
  }

  private async loadPresets(): Promise<void> {
    try {
      const presets = await games.listPresets({}, { signal: this.signal });
      if (!this.form) this.form = this.newGameForm(presets.presets);
      this.error = undefined;
    } catch (error) {
      if (this.signal.aborted) return;
      this.error = refusal(error);
    }
    this.render();
  }

  /** The seats this browser holds, with where their games are now (`only`: that game's). */
  private async loadHeld(only?: string): Promise<void> {
    await Promise.all(
      heldSeats().filter((seat) => only === undefined || seat.gameId === only).map(async (seat) => {
        try {
          const game = (await games.getGame({ gameId: seat.gameId }, { signal: this.signal })).game;
          if (game) this.held.set(seat.gameId, game);
        } catch (error) {
          // A game this server does not have (another server's, or a fresh database).
          if (ConnectError.from(error).code === Code.NotFound) this.held.delete(seat.gameId);
        }
      }),
    );
    if (!this.signal.aborted) this.render();
  }

  /** One click to play: the game, the bots' strength, your name; the game is created with house
   * bots in every other seat and your seat (seat 0) taken, and you land at the table. */
  private quickPlay(): HTMLElement {
    const game = remembered("quick.game", QUICK_GAMES[0].preset);
    const strength = h(
      "select",
      { id: "quick-bots" },
      HOUSE_BOTS.map((b) => h("option", { value: b.strategy }, b.strength)),
    );
    strength.value = remembered("quick.bots", "heuristic");
    if (!strength.value) strength.value = "heuristic";
    const gameChoice = h(
      "fieldset",
      { class: "quick-games" },
      h("legend", {}, "Game"),
      QUICK_GAMES.map((g) =>
        h("label", { class: "radio" }, h("input", { type: "radio", name: "quick-game", value: g.preset, checked: g.preset === game }), ` ${g.label}`),
      ),
    );
    const button = h("button", { type: "submit", class: "primary big" }, "Play");
    const play = async (event: SubmitEvent): Promise<void> => {
      event.preventDefault();
      const preset = gameChoice.querySelector<HTMLInputElement>("input:checked")?.value ?? QUICK_GAMES[0].preset;
      remember("quick.game", preset);
      remember("quick.bots", strength.value);
      const name = this.name();
      button.disabled = true;
      try {
        const listed = await games.listPresets({}, { signal: this.signal });
        const players = listed.presets.find((p) => p.name === preset)?.rules?.players ?? (preset === "moon" ? 3 : 4);
        const created = await games.createGame({
          rules: { preset },
          houseBots: Array.from({ length: players - 1 }, (_, i) => ({ seat: i + 1, strategy: strength.value })),
          requestId: requestId(),
        });
        await takeAndGo(created.game!, 0, name);
      } catch (error) {
        this.error = refusal(error);
        this.render();
      } finally {
        button.disabled = false;
      }
    };
    return h(
      "form",
      { class: "quick-play", aria: { label: "play the computer" }, onsubmit: (e) => void play(e) },
      h("h2", {}, "Play the computer"),
      h("div", { class: "quick-row" },
        h("div", { class: "option" }, h("label", { for: "lobby-name" }, "Your name:"), this.nameInput),
        gameChoice,
        h("div", { class: "option" }, h("label", { for: "quick-bots" }, "Bots"), strength),
        button),
      h("p", { class: "hint" }, "You take seat 0; the server's bots play the other seats. New to the games? Read the ", h("a", { href: "#/help" }, "rules"), "."),
    );
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
    // Your seat is one no bot plays: the first free one, unless you chose another or chose to
    // watch (a table of bots only is for watching).
    let picked: string | undefined;
    seat.addEventListener("change", () => { picked = seat.value; });
    const fillYourSeat = (): void => {
      const botSeats = new Set(botChoices().filter((c) => c.value).map((c) => Number(c.dataset.seat)));
      const free = Array.from({ length: botChoices().length }, (_, i) => i).filter((i) => !botSeats.has(i));
      seat.replaceChildren(
        ...free.map((i) => h("option", { value: String(i) }, `seat ${i}`)),
        h("option", { value: "" }, "none: just watch"),
      );
      if (picked !== undefined && [...seat.options].some((o) => o.value === picked)) seat.value = picked;
      else seat.value = free.length ? String(free[0]) : "";
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

  private of(status: GameStatus): GameSummary[] {
    return [...this.lobby.values()].filter((g) => g.status === status);
  }

  private openGames(): HTMLElement {
    const open = this.of(GameStatus.OPEN);
    return h(
      "section",
      { class: "games", aria: { label: "open games" } },
      h("h2", {}, "Waiting for players"),
      open.length || this.connection === "loading" ? null : h("p", {}, "No game is waiting for players."),
      h(
        "ul",
        {},
        open.map((game) =>
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
    );
  }

  private playingGames(): HTMLElement {
    const playing = this.of(GameStatus.PLAYING);
    return h(
      "section",
      { class: "games", aria: { label: "games in play" } },
      h("h2", {}, "In play"),
      playing.length || this.connection === "loading" ? null : h("p", {}, "No game is being played."),
      h("ul", {}, playing.map((game) => h("li", { data: { game: game.gameId } }, gameLink(game), " ", h("a", { href: `#/game/${game.gameId}` }, heldSeat(game.gameId) ? "Play" : "Watch")))),
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
      h("p", {}, this.error ? "The server's presets could not be read: trying again when the server answers." : "Reading the server's presets…"),
    );
  }

  /** Whether the lists are live, as a person reads it. */
  private connectionLine(): HTMLElement {
    const said = {
      loading: "Reading the lobby…",
      live: "● Live: games come and go here as they are created, filled and finished.",
      reconnecting: "The server cannot be reached: reconnecting…",
      stopped: "Not following the lobby: reload the page to try again.",
    }[this.connection];
    return h("p", { class: `meta connection ${this.connection}`, data: { connection: this.connection } }, said);
  }

  render(): void {
    redraw(this.root, () => [
      h("header", { class: "lobby-head" }, h("h1", {}, "Boneyard"), h("p", {}, "Texas 42 and Moon, the domino games, against the computer or people."), this.connectionLine()),
      this.error ? h("p", { class: "refusal", role: "alert" }, this.error) : null,
      this.quick,
      h("div", { class: "lobby" }, h("div", { class: "lobby-lists" }, this.heldGames(), this.openGames(), this.playingGames()), this.form ?? this.noForm()),
    ]);
  }
}

export function lobbyPage(root: HTMLElement, signal: AbortSignal): void {
  const lobby = new Lobby(root, signal);
  lobby.render();
  void lobby.watch();
}

