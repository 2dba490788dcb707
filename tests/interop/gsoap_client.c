/* gSOAP client generated from Osprey's own WSDL (wsdl2h + soapcpp2, see scripts/interop):
 * calls echoVoid, echoStruct (20 items) and echoList (20 nodes) and checks the echoes.
 * Usage: gsoap_client URL; exit status 0 when every answer is right. */
#include "soapH.h"
#include "WSTestBinding.nsmap"
#include <stdio.h>
#include <string.h>

#define N 20

static int fail(struct soap *soap, const char *what) {
    fprintf(stderr, "gsoap client: %s failed: ", what);
    soap_print_fault(soap, stderr);
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s URL\n", argv[0]); return 2; }
    const char *url = argv[1];
    struct soap *soap = soap_new();
    int bad = 0;

    struct _ns1__echoVoid v_in;
    soap_default__ns1__echoVoid(soap, &v_in);
    struct _ns1__echoVoidResponse v_out;
    if (soap_call___ns1__echoVoid(soap, url, NULL, &v_in, &v_out) != SOAP_OK) bad |= fail(soap, "echoVoid");

    struct ns1__SimpleStruct items[N];
    for (int i = 0; i < N; i++) { items[i].varInt = i; items[i].varFloat = i + 0.5f; items[i].varString = "abcdefghij"; }
    struct ns1__ArrayOfSimpleStruct arr = { N, items };
    struct _ns1__echoStruct s_in = { &arr };
    struct _ns1__echoStructResponse s_out;
    if (soap_call___ns1__echoStruct(soap, url, NULL, &s_in, &s_out) != SOAP_OK) {
        bad |= fail(soap, "echoStruct");
    } else if (!s_out.output || s_out.output->__sizeitem != N) {
        fprintf(stderr, "gsoap client: echoStruct returned the wrong number of items\n"); bad = 1;
    } else {
        for (int i = 0; i < N; i++) {
            struct ns1__SimpleStruct *it = &s_out.output->item[i];
            if (it->varInt != i || it->varFloat != i + 0.5f || strcmp(it->varString, "abcdefghij")) {
                fprintf(stderr, "gsoap client: echoStruct item %d differs\n", i); bad = 1;
            }
        }
    }

    struct ns1__LinkedList nodes[N];
    for (int i = 0; i < N; i++) {
        nodes[i].varInt = i; nodes[i].varFloat = i + 0.5f; nodes[i].varString = "abcdefghij";
        nodes[i].next = i + 1 < N ? &nodes[i + 1] : NULL;
    }
    struct _ns1__echoList l_in = { &nodes[0] };
    struct _ns1__echoListResponse l_out;
    if (soap_call___ns1__echoList(soap, url, NULL, &l_in, &l_out) != SOAP_OK) {
        bad |= fail(soap, "echoList");
    } else {
        int i = 0;
        for (struct ns1__LinkedList *n = l_out.output; n; n = n->next, i++) {
            if (n->varInt != i || n->varFloat != i + 0.5f) { fprintf(stderr, "gsoap client: echoList node %d differs\n", i); bad = 1; }
        }
        if (i != N) { fprintf(stderr, "gsoap client: echoList returned %d nodes\n", i); bad = 1; }
    }
    soap_destroy(soap); soap_end(soap); soap_free(soap);
    if (!bad) printf("gsoap client: echoVoid, echoStruct, echoList OK\n");
    return bad;
}
