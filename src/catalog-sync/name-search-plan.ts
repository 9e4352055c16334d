/** How a first page of a name search is read: `walk` = the start-time index first, `trigram` = the trigram index. */
export type NameSearchPlan = 'walk' | 'trigram';

/** Terms remembered at most (the oldest is forgotten first). */
export const NAME_SEARCH_PLAN_MAX_TERMS = 1024;
/** A term remembered as sparse is tried with the walk again on every this-many-th search, so a term can become dense. */
export const NAME_SEARCH_RELEARN_EVERY = 64;

/**
 * Which plan serves a name search's first page best, learned per term from the searches themselves. PostgreSQL
 * has no statistics on `lower(name)` (the trigram index gives none), so it plans every `LIKE '%term%'` as if a
 * couple of events matched: a bitmap scan of the trigram index that fetches and sorts every match before the
 * LIMIT — for a term in one event name in seven, thousands of rows for a page of 21. Walking the start-time index
 * and filtering reads about limit ÷ share rows instead. The walk statement (catalog-mirror.repository.ts) walks at
 * most 10 × (limit + 1) rows and, when that does not fill the page, answers from the trigram index in the same
 * statement; it reports which one answered. Dense terms (the walk filled the page) keep that statement; sparse
 * ones go straight to the trigram statement and are tried with the walk again now and then. Only the plan is
 * remembered, never rows: both statements return the exact page, whatever is remembered.
 */
export class NameSearchPlans {
  /** Per lowercased term: dense (the walk filled its page), or sparse with its uses since the last walk. */
  private readonly terms = new Map<string, { dense: boolean; uses: number }>();

  constructor(private readonly maxTerms = NAME_SEARCH_PLAN_MAX_TERMS) {}

  get size(): number {
    return this.terms.size;
  }

  /** The plan of the next search of `term`: unknown terms and a sparse term's every 64th search walk first. */
  plan(term: string): NameSearchPlan {
    const known = this.terms.get(term);
    if (known === undefined || known.dense) return 'walk';
    known.uses += 1;
    if (known.uses < NAME_SEARCH_RELEARN_EVERY) return 'trigram';
    known.uses = 0;
    return 'walk';
  }

  /** What a walk statement of `term` found: `walked` when the walk filled the page. */
  learn(term: string, walked: boolean): void {
    if (!this.terms.has(term) && this.terms.size >= this.maxTerms) {
      const oldest = this.terms.keys().next();
      if (!oldest.done) this.terms.delete(oldest.value);
    }
    this.terms.set(term, { dense: walked, uses: 0 });
  }
}
