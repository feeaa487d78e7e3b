// The options of a new game, drawn from the Ruleset message's own descriptor: one input per
// option field (a new option in rules.proto appears here by itself). An option left at "the
// preset's" is not sent, so the preset's value holds, and each says what that value is (the
// complete ruleset GameService.ListPresets sends with the preset); the server checks every
// combination and its refusal is shown as it is.

import { create, ScalarType } from "@bufbuild/protobuf";
import type { DescField, DescOneof } from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import { h } from "./dom";
import { type Ruleset, RulesetSchema } from "@boneyard/client";

/** Set by the preset: choosing the family apart from it only makes nonsense combinations. */
const NOT_OPTIONS = new Set(["preset", "family"]);

function label(name: string): string {
  return name.replaceAll("_", " ");
}

type Reader = (rules: Ruleset) => void;
/** Shows the preset's value of an option (undefined: none known). */
type Shower = (value: unknown) => void;

/** What an option left unset says: the preset's value holds. */
const UNSET = "the preset's";

/** The value first, as a narrow input may cut the rest: "5 (the preset's)". */
function unsetText(value: unknown): string {
  return value === undefined ? UNSET : `${String(value)} (${UNSET})`;
}

function isBool(field: DescField): boolean {
  return field.fieldKind === "scalar" && field.scalar === ScalarType.BOOL;
}

function scalarInput(field: DescField, id: string): [HTMLElement, (set: (v: unknown) => void) => void, Shower] {
  if (field.fieldKind === "enum") {
    const unset = h("option", { value: "" }, UNSET);
    const values = field.enum.values.filter((v) => v.number !== 0);
    const select = h(
      "select",
      { id, name: field.name },
      unset,
      values.map((v) => h("option", { value: String(v.number) }, label(v.localName.toLowerCase()))),
    );
    const show: Shower = (value) => {
      const known = values.find((v) => v.number === value);
      unset.textContent = unsetText(known && label(known.localName.toLowerCase()));
    };
    return [select, (set) => { if (select.value !== "") set(Number(select.value)); }, show];
  }
  if (isBool(field)) {
    const unset = h("option", { value: "" }, UNSET);
    const select = h(
      "select",
      { id, name: field.name },
      unset,
      h("option", { value: "true" }, "on"),
      h("option", { value: "false" }, "off"),
    );
    const show: Shower = (value) => { unset.textContent = unsetText(value === undefined ? undefined : value ? "on" : "off"); };
    return [select, (set) => { if (select.value !== "") set(select.value === "true"); }, show];
  }
  const input = h("input", { id, name: field.name, type: "number", min: "0", placeholder: UNSET });
  const show: Shower = (value) => { input.placeholder = unsetText(value); };
  return [input, (set) => { if (input.value.trim() !== "") set(Number(input.value)); }, show];
}

function oneofInput(oneof: DescOneof, id: string): [HTMLElement, Reader, (rules: Ruleset) => void] {
  // A choice of member, then its value (a seat number, or a flag that may only be true).
  const unset = h("option", { value: "" }, UNSET);
  const which = h(
    "select",
    { id, name: oneof.name },
    unset,
    oneof.fields.map((f) => h("option", { value: f.name }, label(f.name))),
  );
  const value = h("input", { id: `${id}-value`, type: "number", min: "0", placeholder: "value", aria: { label: `${label(oneof.name)} value` } });
  const read: Reader = (rules) => {
    const field = oneof.fields.find((f) => f.name === which.value);
    if (!field) return;
    const r = reflect(RulesetSchema, rules);
    r.set(field, isBool(field) ? true : Number(value.value || "0"));
  };
  const show = (rules: Ruleset): void => {
    const r = reflect(RulesetSchema, rules);
    const field = r.oneofCase(oneof);
    const said = field && (isBool(field) ? label(field.name) : `${label(field.name)} ${String(r.get(field))}`);
    unset.textContent = unsetText(said);
  };
  return [h("span", { class: "oneof" }, which, value), read, show];
}

/** The options part of the new-game form, a function reading it into a Ruleset, and one
 * showing a preset's values (its complete ruleset, as ListPresets sends it) beside "the preset's". */
export function optionsForm(): {
  element: HTMLElement;
  read: (preset: string) => Ruleset;
  showPreset: (rules: Ruleset | undefined) => void;
} {
  const readers: Reader[] = [];
  const showers: ((rules: Ruleset | undefined) => void)[] = [];
  const rows: HTMLElement[] = [];
  const seenOneofs = new Set<string>();
  for (const field of RulesetSchema.fields) {
    if (NOT_OPTIONS.has(field.name)) continue;
    const id = `option-${field.name}`;
    if (field.oneof) {
      if (seenOneofs.has(field.oneof.name)) continue;
      seenOneofs.add(field.oneof.name);
      const [input, read, show] = oneofInput(field.oneof, `option-${field.oneof.name}`);
      readers.push(read);
      showers.push((rules) => show(rules ?? create(RulesetSchema)));
      rows.push(h("div", { class: "option" }, h("label", { for: `option-${field.oneof.name}` }, label(field.oneof.name)), input));
      continue;
    }
    const [input, read, show] = scalarInput(field, id);
    readers.push((rules) => read((v) => reflect(RulesetSchema, rules).set(field, v)));
    showers.push((rules) => {
      const r = rules && reflect(RulesetSchema, rules);
      show(r?.isSet(field) ? r.get(field) : undefined);
    });
    rows.push(h("div", { class: "option" }, h("label", { for: id }, label(field.name)), input));
  }
  return {
    element: h("details", { class: "options" }, h("summary", {}, "Options (unset: the preset's value)"), h("div", { class: "option-grid" }, rows)),
    read: (preset) => {
      const rules = create(RulesetSchema, { preset });
      for (const read of readers) read(rules);
      return rules;
    },
    showPreset: (rules) => {
      for (const show of showers) show(rules);
    },
  };
}
