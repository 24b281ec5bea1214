// JSON POST for the lesson panels and live training.

/** POST `body` as JSON to `url`; the parsed answer, or an Error with the server's `detail`. */
export async function post(url, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body || {}),
  });
  const data = await response.json();
  if (!response.ok) throw new Error(data.detail || response.statusText);
  return data;
}


/** A `post` for one panel whose answers can arrive out of order (the page's first answer is
 * slow on a busy server; a user clicks again): each call resolves to its answer, or to `null`
 * when a later call of the same poster was made before it returned, so a stale answer (or its
 * error) never overwrites a newer one. */
export function newestOnly() {
  let latest = 0;
  return async (url, body) => {
    const ticket = ++latest;
    try {
      const data = await post(url, body);
      return ticket === latest ? data : null;
    } catch (err) {
      if (ticket === latest) throw err;
      return null;
    }
  };
}
