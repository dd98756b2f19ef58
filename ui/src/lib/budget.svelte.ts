// The context budget of the enabled servers, shared by the Installed page's bar and the cards'
// costs: loaded from the core, reloaded when servers change.

import { api, toFailure, type BudgetView } from "./ipc";

class Budget {
  view = $state<BudgetView | null>(null);
  error = $state<string | null>(null);

  async load() {
    try {
      this.view = await api.budget();
      this.error = null;
    } catch (e) {
      this.error = toFailure(e).message;
    }
  }
}

export const budget = new Budget();
