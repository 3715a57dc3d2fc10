// A client's message handling written against the generated interfaces only:
// it compiles under --strict when every server message has its own literal
// `type` (the switch narrows and the `never` check sees every case), and when a
// move from `legal_actions` is exactly what `play` takes.
import { BalanceMessage } from "./interfaces/BalanceMessage";
import { ErrorMessage } from "./interfaces/ErrorMessage";
import { LobbyView } from "./interfaces/LobbyView";
import { MatchResultMessage } from "./interfaces/MatchResultMessage";
import { OpenedElsewhereMessage } from "./interfaces/OpenedElsewhereMessage";
import { Play } from "./interfaces/Play";
import { PongMessage } from "./interfaces/PongMessage";
import { QueueLeftMessage } from "./interfaces/QueueLeftMessage";
import { QueuedMessage } from "./interfaces/QueuedMessage";
import { RoundResultMessage } from "./interfaces/RoundResultMessage";
import { ViewMessage } from "./interfaces/ViewMessage";
import { WelcomeMessage } from "./interfaces/WelcomeMessage";

export type Incoming =
  | ViewMessage
  | ErrorMessage
  | RoundResultMessage
  | MatchResultMessage
  | QueuedMessage
  | QueueLeftMessage
  | LobbyView
  | BalanceMessage
  | WelcomeMessage
  | PongMessage
  | OpenedElsewhereMessage;

export function respond(message: Incoming, cid: string): Play | string | null {
  switch (message.type) {
    case "view": {
      const view = message.view;
      const move = view.legal_actions[0];
      if (view.turn !== view.seat || move === undefined) return null;
      return { action: "play", table_id: message.table_id, version: message.version, move, cid };
    }
    case "error":
      return message.view ? respond(message.view, cid) : message.code;
    case "round_result":
      return `${message.round}: ${message.scores["A"]?.total ?? 0}`;
    case "match_result":
      return message.winner;
    case "queued":
      return String(message.expires_at);
    case "queue_left":
      return message.reason;
    case "lobby":
      return message.you === message.host ? "may fill with bots" : message.status;
    case "balance":
      return String(message.points);
    case "welcome":
      return message.player_id;
    case "pong":
      return null;
    case "opened_elsewhere":
      return "stop reconnecting";
    default: {
      const unknown: never = message;
      return unknown;
    }
  }
}
