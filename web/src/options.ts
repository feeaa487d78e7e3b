// The options of a new game, drawn from the Ruleset message's own descriptor: one input per
// option field (a new option in rules.proto appears here by itself). An option left at "the
// preset's" is not sent, so the preset's value holds; the server checks every combination and
// its refusal is shown as it is.

import { create, ScalarType } from "@bufbuild/protobuf";
import type { DescField, DescOneof } from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import { h } from "./dom";
import { type Ruleset, RulesetSchema } from "./gen/boneyard/v1/rules_pb";

/** The presets rules.proto documents (Ruleset.preset), with the game and its table size. */
export const PRESETS: readonly { name: string; label: string; players: number }[] = [
  { name: "texas42", label: "Texas 42 (straight, tournament)", players: 4 },
  { name: "texas42-house", label: "Texas 42 house (nello, plunge, splash, sevens)", players: 4 },
  { name: "texas42-redeal", label: "Texas 42, all pass: redeal", players: 4 },
  { name: "texas42-points", label: "Texas 42 to 250 points", players: 4 },
  { name: "moon", label: "Moon [S0]", players: 3 },
  { name: "moon-s1", label: "Moon [S1]", players: 3 },
  { name: "moon-pagat", label: "Moon (pagat: trump before the widow)", players: 3 },
  { name: "moon-no-widow", label: "Moon without the widow (21 tiles, bidding goes round)", players: 3 },
  { name: "moon-overcall", label: "Moon with the overcall of 42 (bids from 5)", players: 3 },
];

/** Set by the preset: choosing the family apart from it only makes nonsense combinations. */
const NOT_OPTIONS = new Set(["preset", "family"]);

function label(name: string): string {
  return name.replaceAll("_", " ");
}

type Reader = (rules: Ruleset) => void;

function isBool(field: DescField): boolean {
  return field.fieldKind === "scalar" && field.scalar === ScalarType.BOOL;
}

function scalarInput(field: DescField, id: string): [HTMLElement, (set: (v: unknown) => void) => void] {
  if (field.fieldKind === "enum") {
    const select = h(
      "select",
      { id, name: field.name },
      h("option", { value: "" }, "the preset's"),
      field.enum.values.filter((v) => v.number !== 0).map((v) => h("option", { value: String(v.number) }, label(v.localName.toLowerCase()))),
    );
    return [select, (set) => { if (select.value !== "") set(Number(select.value)); }];
  }
  if (isBool(field)) {
    const select = h(
      "select",
      { id, name: field.name },
      h("option", { value: "" }, "the preset's"),
      h("option", { value: "true" }, "on"),
      h("option", { value: "false" }, "off"),
    );
    return [select, (set) => { if (select.value !== "") set(select.value === "true"); }];
  }
  const input = h("input", { id, name: field.name, type: "number", min: "0", placeholder: "the preset's" });
  return [input, (set) => { if (input.value.trim() !== "") set(Number(input.value)); }];
}

function oneofInput(oneof: DescOneof, id: string): [HTMLElement, Reader] {
  // A choice of member, then its value (a seat number, or a flag that may only be true).
  const which = h(
    "select",
    { id, name: oneof.name },
    h("option", { value: "" }, "the preset's"),
    oneof.fields.map((f) => h("option", { value: f.name }, label(f.name))),
  );
  const value = h("input", { id: `${id}-value`, type: "number", min: "0", placeholder: "value", aria: { label: `${label(oneof.name)} value` } });
  const read: Reader = (rules) => {
    const field = oneof.fields.find((f) => f.name === which.value);
    if (!field) return;
    const r = reflect(RulesetSchema, rules);
    r.set(field, isBool(field) ? true : Number(value.value || "0"));
  };
  return [h("span", { class: "oneof" }, which, value), read];
}

/** The options part of the new-game form, and a function reading it into a Ruleset. */
export function optionsForm(): { element: HTMLElement; read: (preset: string) => Ruleset } {
  const readers: Reader[] = [];
  const rows: HTMLElement[] = [];
  const seenOneofs = new Set<string>();
  for (const field of RulesetSchema.fields) {
    if (NOT_OPTIONS.has(field.name)) continue;
    const id = `option-${field.name}`;
    if (field.oneof) {
      if (seenOneofs.has(field.oneof.name)) continue;
      seenOneofs.add(field.oneof.name);
      const [input, read] = oneofInput(field.oneof, `option-${field.oneof.name}`);
      readers.push(read);
      rows.push(h("div", { class: "option" }, h("label", { for: `option-${field.oneof.name}` }, label(field.oneof.name)), input));
      continue;
    }
    const [input, read] = scalarInput(field, id);
    readers.push((rules) => read((v) => reflect(RulesetSchema, rules).set(field, v)));
    rows.push(h("div", { class: "option" }, h("label", { for: id }, label(field.name)), input));
  }
  return {
    element: h("details", { class: "options" }, h("summary", {}, "Options (unset: the preset's value)"), h("div", { class: "option-grid" }, rows)),
    read: (preset) => {
      const rules = create(RulesetSchema, { preset });
      for (const read of readers) read(rules);
      return rules;
    },
  };
}
