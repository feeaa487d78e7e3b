// The web app: a hash router over its pages. Each page gets the element to draw in and a
// signal that aborts when the page is left (its streams and timers stop with it).

import { signedIn } from "./account";
import { challengesPage } from "./challenges";
import { h } from "./dom";
import { gamePage } from "./game";
import { helpPage } from "./help";
import { leaderboardPage, playerPage } from "./leaderboard";
import { lobbyPage } from "./lobby";
import { matchesPage, matchPage } from "./matches";
import { mePage } from "./me";
import { archivePage, replayPage } from "./replay";
import { tournamentPage, tournamentsPage } from "./tournaments";
import "./style.css";

const root = document.getElementById("app")!;
let leave: AbortController | undefined;

function route(): void {
  leave?.abort();
  leave = new AbortController();
  const page = h("main", {});
  const [, where, id] = location.hash.replace(/^#/, "").split("/");
  const nav = h(
    "nav",
    { class: "top", aria: { label: "pages" } },
    h("a", { href: "#/" }, "Lobby"),
    h("a", { href: "#/archive" }, "Archive"),
    h("a", { href: "#/tournaments" }, "Tournaments"),
    h("a", { href: "#/matches" }, "Matches"),
    h("a", { href: "#/leaderboard" }, "Leaderboard"),
    h("a", { href: "#/challenges" }, "Challenges"),
    h("a", { href: "#/help" }, "Help"),
    h("a", { href: "#/me", class: "account-link" }, signedIn()?.name ?? "Sign in"),
  );
  root.replaceChildren(nav, page);
  if (where === "game" && id) gamePage(page, decodeURIComponent(id), leave.signal);
  else if (where === "replay" && id) replayPage(page, decodeURIComponent(id), leave.signal);
  else if (where === "archive") archivePage(page, leave.signal);
  else if (where === "help") helpPage(page);
  else if (where === "me") mePage(page, leave.signal);
  else if (where === "leaderboard") leaderboardPage(page, id, leave.signal);
  else if (where === "player" && id) playerPage(page, decodeURIComponent(id), leave.signal);
  else if (where === "challenges") challengesPage(page, id ? decodeURIComponent(id) : undefined, leave.signal);
  else if (where === "tournaments") tournamentsPage(page, leave.signal);
  else if (where === "tournament" && id) tournamentPage(page, decodeURIComponent(id), leave.signal);
  else if (where === "matches") matchesPage(page, leave.signal);
  else if (where === "match" && id) matchPage(page, decodeURIComponent(id), leave.signal);
  else lobbyPage(page, leave.signal);
}

window.addEventListener("hashchange", route);
route();
