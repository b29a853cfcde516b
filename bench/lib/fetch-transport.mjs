/** The provider `Transport` interface implemented over global `fetch`: the old path, kept for bench/transport.mjs only. */
export function fetchTransport() {
  return {
    async request(request) {
      const controller = new AbortController();
      const response = await fetch(request.url, {
        method: request.method ?? 'GET',
        headers: request.headers,
        body: request.body,
        signal: controller.signal,
        redirect: 'manual',
      });
      return {
        status: response.status,
        url: request.url,
        headers: response.headers,
        body: response.body ?? [],
        async text(maxBytes) {
          return (await response.text()).slice(0, maxBytes);
        },
        destroy: () => controller.abort(),
        close: () => {},
      };
    },
  };
}
