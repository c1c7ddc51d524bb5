/** Knob rules armed for the next `count` matching events: each match uses one up, and a used-up rule goes. */
export class CountedRules<Rule extends { count: number }> {
  private rules: (Rule & { remaining: number })[] = [];

  arm(rule: Rule): void {
    this.rules.push({ ...rule, remaining: rule.count });
  }

  /** The first armed rule that matches, used once; null when none does. */
  take(matches: (rule: Rule) => boolean): Rule | null {
    const rule = this.rules.find(matches);
    if (!rule) return null;
    if (--rule.remaining === 0) this.rules = this.rules.filter((other) => other !== rule);
    return rule;
  }

  describe(): (Rule & { remaining: number })[] {
    return this.rules.map((rule) => ({ ...rule }));
  }

  clear(): void {
    this.rules = [];
  }

  /** Disarms the rules that match. */
  remove(matches: (rule: Rule) => boolean): void {
    this.rules = this.rules.filter((rule) => !matches(rule));
  }
}
